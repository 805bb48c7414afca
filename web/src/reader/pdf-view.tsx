import { useEffect, useRef, useState } from 'react';
import type { PageViewport, PDFDocumentProxy, PDFPageProxy, PDFWorker } from 'pdfjs-dist';
import { workerPool, type HeldWorker } from './pdf-worker-pool.js';

type PdfJs = typeof import('pdfjs-dist');

let pdfjsLoading: Promise<PdfJs> | undefined;

/** pdf.js is loaded the first time a PDF is shown, never with the page itself. */
function loadPdfJs(): Promise<PdfJs> {
  pdfjsLoading ??= Promise.all([import('pdfjs-dist'), import('pdfjs-dist/build/pdf.worker.min.mjs?url')]).then(
    ([pdfjs, worker]) => {
      pdfjs.GlobalWorkerOptions.workerSrc = worker.default;
      return pdfjs;
    },
  );
  return pdfjsLoading;
}

/** pdf.js's worker, shared by the documents shown one after another (see workerPool). */
let takePdfWorker: (() => HeldWorker<PDFWorker>) | undefined;

const ZOOMS = [0.5, 0.75, 1, 1.25, 1.5, 2, 3];

/** The widest a page is drawn at 100 %, however wide the window. */
const MAX_PAGE_WIDTH = 900;

/**
 * The visual layer drawn by pdf.js with scripting, eval and XFA off: canvases with a text layer over
 * them, so text can be selected and copied. Pages are drawn as they come near the view, one at a time, lowest first.
 */
export function PdfView({ bytes, label }: { bytes: Uint8Array; label: string }) {
  const [doc, setDoc] = useState<PDFDocumentProxy | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [zoom, setZoom] = useState(1);
  const [drawn, setDrawn] = useState(0);
  /** Whether pages are being drawn (aria-busy on the pages): none is, once the ones in view are done. */
  const [drawing, setDrawing] = useState(true);
  const pagesRef = useRef<HTMLDivElement>(null);
  /** A page is being drawn (pdf.js's worker is working for this document). */
  const pumpingRef = useRef(false);
  // The width the pages are drawn for: the box's own, measured while it is shown, up to MAX_PAGE_WIDTH. A
  // box in a hidden tab measures 0 and waits to be shown; a phone turned sideways gets its pages drawn
  // again for the new width, and a wide window resized above that width draws nothing again.
  const [width, setWidth] = useState(0);

  useEffect(() => {
    const container = pagesRef.current;
    if (!container) return;
    const observer = new ResizeObserver(([entry]) =>
      setWidth(Math.min(MAX_PAGE_WIDTH, Math.floor(entry?.contentRect.width ?? 0))),
    );
    observer.observe(container);
    return () => observer.disconnect();
  }, []);

  useEffect(() => {
    let cancelled = false;
    let loaded: PDFDocumentProxy | null = null;
    let held: HeldWorker<PDFWorker> | null = null;
    setDoc(null);
    setError(null);
    loadPdfJs()
      .then((pdfjs) => {
        if (cancelled) throw new Error('closed');
        takePdfWorker ??= workerPool(() => new pdfjs.PDFWorker());
        held = takePdfWorker();
        return pdfjs.getDocument({
          data: bytes.slice(),
          worker: held.worker,
          isEvalSupported: false,
          enableXfa: false,
          useSystemFonts: false,
          isOffscreenCanvasSupported: false,
        }).promise;
      })
      .then((pdf) => {
        loaded = pdf;
        if (cancelled) void pdf.destroy();
        else setDoc(pdf);
      })
      .catch((e: unknown) => {
        if (!cancelled) setError(e instanceof Error ? e.message : String(e));
      });
    return () => {
      cancelled = true;
      // Closed before it loaded, or with a page being drawn: pdf.js may still be working for it.
      const busy = loaded === null || pumpingRef.current;
      const worker = held;
      void Promise.resolve(loaded?.destroy())
        .catch(() => undefined)
        .finally(() => worker?.release(busy));
    };
  }, [bytes]);

  useEffect(() => {
    const container = pagesRef.current;
    if (!doc || !container || width === 0) return;
    let cancelled = false;
    container.replaceChildren();
    setDrawn(0);
    setDrawing(true);
    const pages: { page: PDFPageProxy; viewport: PageViewport; frame: HTMLDivElement }[] = [];
    /** Pages near the view and not drawn yet, drawn lowest first, one at a time. */
    const wanted = new Set<number>();
    let pumping = false;
    /** Pages are still being laid out (and the observer has yet to say which of them are near the view). */
    let placing = true;
    let count = 0;
    /** Busy while pages are laid out, drawn, or waiting to be drawn. */
    const settle = (): void => {
      if (!cancelled && !pumping) setDrawing(placing || wanted.size > 0);
    };
    const pump = async (): Promise<void> => {
      if (pumping) return;
      if (wanted.size === 0) {
        settle();
        return;
      }
      pumping = true;
      pumpingRef.current = true;
      setDrawing(true);
      try {
        const pdfjs = await loadPdfJs();
        while (!cancelled && wanted.size > 0) {
          const n = Math.min(...wanted);
          wanted.delete(n);
          const { page, viewport, frame } = pages[n - 1]!;
          observer.unobserve(frame);
          const outputScale = globalThis.devicePixelRatio || 1;
          const canvas = document.createElement('canvas');
          canvas.width = Math.floor(viewport.width * outputScale);
          canvas.height = Math.floor(viewport.height * outputScale);
          canvas.style.width = `${Math.floor(viewport.width)}px`;
          canvas.style.height = `${Math.floor(viewport.height)}px`;
          canvas.setAttribute('aria-hidden', 'true');
          canvas.dataset.page = String(n);
          const text = document.createElement('div');
          text.className = 'textLayer';
          frame.style.setProperty('--scale-factor', String(viewport.scale));
          frame.style.setProperty('--total-scale-factor', String(viewport.scale));
          frame.append(canvas, text);
          await page.render({
            canvas,
            viewport,
            transform: outputScale !== 1 ? [outputScale, 0, 0, outputScale, 0, 0] : undefined,
          }).promise;
          if (cancelled) break;
          await new pdfjs.TextLayer({
            textContentSource: page.streamTextContent(),
            container: text,
            viewport,
          }).render();
          setDrawn(++count);
        }
      } finally {
        pumping = false;
        pumpingRef.current = false;
        settle();
      }
    };
    // A page is drawn once it comes within a window's height of the view: a 40-page invoice opens with the
    // pages one can see, not with 40 canvases (several megabytes each) and their text drawn at once.
    const observer = new IntersectionObserver(
      (entries) => {
        for (const entry of entries) {
          if (entry.isIntersecting) wanted.add(Number((entry.target as HTMLElement).dataset.page));
        }
        void pump().catch(fail);
      },
      { rootMargin: '100% 0px' },
    );
    const fail = (e: unknown): void => {
      if (!cancelled) setError(e instanceof Error ? e.message : String(e));
    };
    void (async () => {
      // Every page laid out at its own size, so the scroll bar and the captions are right from the start; each
      // is watched as soon as it is placed, so the first is drawn while the rest are still being laid out.
      for (let n = 1; n <= doc.numPages && !cancelled; n++) {
        const page = await doc.getPage(n);
        const base = page.getViewport({ scale: 1 });
        // Zoom 1 fits the width available (a phone gets a page it can read without scrolling sideways).
        const scale = (width / base.width) * zoom;
        const viewport = page.getViewport({ scale });
        const figure = document.createElement('figure');
        figure.className = 'pdf-page';
        const frame = document.createElement('div');
        frame.className = 'pdf-frame';
        frame.dataset.page = String(n);
        frame.style.width = `${Math.floor(viewport.width)}px`;
        frame.style.height = `${Math.floor(viewport.height)}px`;
        const caption = document.createElement('figcaption');
        caption.textContent = `Page ${n} of ${doc.numPages}`;
        figure.append(frame, caption);
        container.append(figure);
        pages.push({ page, viewport, frame });
        observer.observe(frame);
      }
      // The observer reports the last pages placed after the next frame is rendered: until then, which of
      // them are near the view is not known, and the pages stay busy.
      await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
      placing = false;
      settle();
    })().catch(fail);
    return () => {
      cancelled = true;
      observer.disconnect();
    };
  }, [doc, zoom, width]);

  if (error) {
    return (
      <p role="alert" className="notice error">
        The visual layer could not be drawn: {error}
      </p>
    );
  }
  const index = ZOOMS.indexOf(zoom);
  return (
    <div className="pdf-view">
      <div className="toolbar" role="toolbar" aria-label={`${label} zoom`}>
        <button type="button" onClick={() => setZoom(ZOOMS[index - 1]!)} disabled={index <= 0} aria-label="Zoom out">
          −
        </button>
        <span aria-live="polite">{Math.round(zoom * 100)} %</span>
        <button
          type="button"
          onClick={() => setZoom(ZOOMS[index + 1]!)}
          disabled={index >= ZOOMS.length - 1}
          aria-label="Zoom in"
        >
          +
        </button>
        <button type="button" onClick={() => setZoom(1)} disabled={zoom === 1}>
          Fit width
        </button>
        <span className="muted">
          {doc
            ? `${drawn} of ${doc.numPages} page${doc.numPages === 1 ? '' : 's'} drawn` +
              (!drawing && drawn < doc.numPages ? ', the others as they come into view' : '')
            : 'Opening the PDF…'}
        </span>
      </div>
      {/* Focusable: the pages scroll inside this box, and a keyboard must be able to scroll them too. */}
      <div className="pdf-pages" ref={pagesRef} aria-label={label} aria-busy={drawing} role="document" tabIndex={0} />
    </div>
  );
}
