import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { Link, useLocation } from 'wouter';
import { api, unwrap } from '../api/client.js';
import { download } from '../download.js';
import { formatBytes, formatDateTime, formatDay } from '../format.js';
import { readArchive } from '../reader/engine.js';
import { OutcomeView } from '../reader/outcome-view.js';
import { fetchJwks } from '../reader/trust.js';
import { useAwaitedEvent, useLiveStatus } from '../use-live.js';
import { ErpPushes } from './erp-pushes.js';
import { ProblemNotice, StatusBadge } from './status.js';
import { NamedBy, ReferenceLink, WholeNumbers, documentTitle, formatTotal, wordsFor } from './summary.js';
import './documents.css';

/** One stored document: its record, the reader's views on the stored bytes, and what can be done to it. */
export function DocumentPage({ id }: { id: string }) {
  const queryClient = useQueryClient();
  const [, navigate] = useLocation();
  const dialogRef = useRef<HTMLDialogElement>(null);
  // A signing asked for and not yet ended, with the time of the failure the record showed when it was asked
  // for (that failure is an earlier signing's, not this one's).
  const [signing, setSigning] = useState<{ failedBefore: string | null } | null>(null);

  // The verdict, the signature and a signing's failure arrive as events on the stream (document.validated,
  // document.signed, document.signing_failed), each of which has the record read again; only while the
  // stream cannot open is the record polled.
  const live = useLiveStatus();
  const record = useQuery({
    queryKey: ['document', id],
    queryFn: () => unwrap(api.GET('/sdf/{id}', { params: { path: { id } } })),
    refetchInterval: (query) =>
      live === 'down' && (query.state.data?.status === 'pending' || signing !== null) ? 1000 : false,
  });
  useAwaitedEvent(['document', id], signing !== null);
  const doc = record.data;

  // The stored bytes, fetched again whenever the record changes state (signing rewrites the file).
  const bytes = useQuery({
    queryKey: ['document-bytes', id, doc?.status, doc?.is_signed],
    enabled: doc !== undefined && doc.status !== 'pending',
    queryFn: async () => {
      const answer = await unwrap(api.GET('/download/{id}', { params: { path: { id } }, parseAs: 'arrayBuffer' }));
      return new Uint8Array(answer as unknown as ArrayBuffer);
    },
  });

  const tenant = useQuery({ queryKey: ['tenant'], queryFn: () => unwrap(api.GET('/tenant')), staleTime: 60_000 });
  const slug = tenant.data?.tenant.slug;

  const outcome = useQuery({
    // The bytes are named by when they arrived, never put in the key themselves: a key is hashed as JSON,
    // and a file's bytes as JSON are one key per byte (seconds of the page's time for a 1 MB file).
    queryKey: ['document-outcome', id, bytes.dataUpdatedAt, slug],
    enabled: bytes.data !== undefined,
    queryFn: async () => {
      const trustedKeys = slug
        ? await fetchJwks(`/.well-known/sdf-keys/${encodeURIComponent(slug)}`).catch(() => undefined)
        : undefined;
      return readArchive(bytes.data!, { trustedKeys });
    },
  });

  useEffect(() => {
    if (!signing || !doc) return;
    const failed = doc.signing_error && doc.signing_error.failed_at !== signing.failedBefore;
    if (doc.status === 'signed' || failed) setSigning(null);
  }, [signing, doc]);

  const sign = useMutation({
    // The failure on the record when Sign was pressed: what the record shows once this signing ends is news.
    mutationFn: (_failedBefore: string | null) => unwrap(api.POST('/sign/{id}', { params: { path: { id } } })),
    onSuccess: (_, failedBefore) => {
      setSigning({ failedBefore });
      void queryClient.invalidateQueries({ queryKey: ['document', id] });
    },
  });
  const verify = useMutation({ mutationFn: () => unwrap(api.POST('/verify/{id}', { params: { path: { id } } })) });
  const remove = useMutation({
    mutationFn: () => unwrap(api.DELETE('/sdf/{id}', { params: { path: { id } } })),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ['documents'] });
      navigate('/documents');
    },
  });

  if (record.error) {
    return (
      <section>
        <h1 tabIndex={-1}>Document</h1>
        <ProblemNotice error={record.error} />
        <p>
          <Link href="/documents">Back to documents</Link>
        </p>
      </section>
    );
  }
  if (!doc) return <p role="status">Loading the document…</p>;

  const summary = doc.summary;
  const words = wordsFor(doc.document_type);
  // The downloaded file is named by its business number when it has one, else by the service's id.
  const fileName = `${doc.document_type ?? 'document'}-${(summary?.number ?? doc.id).replace(/[^\w.-]+/g, '-')}.sdf`;
  const canSign = doc.status === 'valid' && !doc.is_signed;
  return (
    <section>
      <p>
        <Link href="/documents">← All documents</Link>
      </p>
      <div className="page-head">
        <h1 tabIndex={-1} className="doc-title">
          <WholeNumbers text={documentTitle(doc)} />
        </h1>
        <StatusBadge status={doc.status} />
      </div>
      {summary ? (
        <dl className="fields compact" data-testid="document-summary">
          <div>
            <dt>Issued by</dt>
            <dd>{summary.issuer ?? '—'}</dd>
          </div>
          <div>
            <dt>{words.counterparty}</dt>
            <dd>{summary.counterparty ?? '—'}</dd>
          </div>
          <div>
            <dt>Total</dt>
            <dd>{formatTotal(summary)}</dd>
          </div>
          <div>
            <dt>Issued</dt>
            <dd>{formatDay(summary.issue_date)}</dd>
          </div>
          <div>
            <dt>{words.due}</dt>
            <dd>{formatDay(summary.due_date)}</dd>
          </div>
          {summary.references.length > 0 && (
            <div>
              <dt>Refers to</dt>
              <dd>
                <ul className="plain-list">
                  {summary.references.map((reference) => (
                    <li key={reference}>
                      <ReferenceLink reference={reference} self={doc.id} />
                    </li>
                  ))}
                </ul>
              </dd>
            </div>
          )}
          {summary.number && <NamedBy number={summary.number} self={doc.id} />}
        </dl>
      ) : (
        doc.status !== 'pending' && (
          <p className="hint">The service could not read what this document is: its data could not be parsed.</p>
        )
      )}
      <div className="actions">
        {canSign && (
          <button
            type="button"
            onClick={() => sign.mutate(doc.signing_error?.failed_at ?? null)}
            disabled={sign.isPending || signing !== null}
          >
            {signing ? 'Signing…' : 'Sign'}
          </button>
        )}
        {doc.is_signed && (
          <button type="button" className="secondary" onClick={() => verify.mutate()} disabled={verify.isPending}>
            {verify.isPending ? 'Verifying…' : 'Verify signature'}
          </button>
        )}
        <button
          type="button"
          className="secondary"
          disabled={!bytes.data}
          onClick={() => bytes.data && download(bytes.data, fileName, 'application/vnd.sdf+zip')}
        >
          Download
        </button>
        <button type="button" className="danger" onClick={() => dialogRef.current?.showModal()}>
          Delete
        </button>
      </div>
      {signing && (
        <div role="status" aria-live="polite" className="progress-block">
          <p>Signing the document…</p>
          <progress aria-label="Signing" />
        </div>
      )}
      {doc.signing_error && !signing && (
        <p className="notice error" role="alert">
          Signing failed: {doc.signing_error.message}
        </p>
      )}
      {verify.data && (
        <p className={`notice ${verify.data.valid ? 'ok' : 'error'}`} role="status" data-testid="verify-result">
          {verify.data.valid
            ? `The signature is valid${verify.data.trusted ? ' and made with one of your organisation’s keys' : ''}.`
            : `The signature is not valid: ${verify.data.reason ?? 'unknown reason'}.`}
        </p>
      )}
      <ProblemNotice error={sign.error ?? verify.error ?? remove.error ?? bytes.error} />
      {doc.status === 'pending' && (
        <div role="status" className="progress-block">
          <p>The service is checking this file…</p>
          <progress aria-label="Checking the file" />
        </div>
      )}
      <ErpPushes documentId={id} ready={doc.status === 'valid' || doc.status === 'signed'} />
      {outcome.data ? (
        <OutcomeView
          outcome={outcome.data}
          fileName={fileName}
          showSummary={false}
          record={
            <dl className="fields compact" data-testid="record">
              <div>
                <dt>Service id</dt>
                <dd className="id">{doc.id}</dd>
              </div>
              <div>
                <dt>Uploaded</dt>
                <dd>{formatDateTime(doc.created_at)}</dd>
              </div>
              <div>
                <dt>Size</dt>
                <dd>{formatBytes(doc.file_size_bytes)}</dd>
              </div>
              <div>
                <dt>Schema</dt>
                <dd>{doc.schema_id ?? '—'}</dd>
              </div>
              <div>
                <dt>Signed</dt>
                <dd>{doc.is_signed ? `Yes, ${doc.signature_algorithm ?? ''}` : 'No'}</dd>
              </div>
            </dl>
          }
          trustedBy={slug ? `${location.origin}/.well-known/sdf-keys/${encodeURIComponent(slug)}` : null}
        />
      ) : (
        doc.status !== 'pending' && <p role="status">Opening the stored file…</p>
      )}
      <dialog ref={dialogRef} aria-labelledby="delete-heading">
        <h2 id="delete-heading">Delete this document?</h2>
        <p>The file and its record are removed for good. Copies already downloaded are not affected.</p>
        <div className="actions">
          <button
            type="button"
            className="danger"
            onClick={() => {
              dialogRef.current?.close();
              remove.mutate();
            }}
          >
            Delete for good
          </button>
          <button type="button" className="secondary" onClick={() => dialogRef.current?.close()}>
            Keep it
          </button>
        </div>
      </dialog>
    </section>
  );
}
