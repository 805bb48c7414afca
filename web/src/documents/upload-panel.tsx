import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { Link } from 'wouter';
import { api, unwrap, type Schemas } from '../api/client.js';
import { SDF_ERROR_SENTENCES } from '../api/errors.js';
import { fetchWithUploadProgress } from '../api/upload.js';
import { formatBytes } from '../format.js';
import { useLiveStatus } from '../use-live.js';
import { ProblemNotice, StatusBadge } from './status.js';

/** Follows an uploaded document until validation ends, then says why it is or is not valid. */
function UploadedStatus({ id, name }: { id: string; name: string }) {
  const queryClient = useQueryClient();
  // The verdict arrives as an event on the stream; only while the stream cannot open is the record polled.
  const live = useLiveStatus();
  const { data, error } = useQuery({
    queryKey: ['document', id],
    queryFn: () => unwrap(api.GET('/sdf/{id}', { params: { path: { id } } })),
    refetchInterval: (query) =>
      live === 'down' && (query.state.data?.status === 'pending' || !query.state.data) ? 800 : false,
  });
  const final = data && data.status !== 'pending';
  useEffect(() => {
    if (final) void queryClient.invalidateQueries({ queryKey: ['documents'] });
  }, [final, queryClient]);
  const problem = data?.validation?.error;
  return (
    <div className="upload-status" role="status" aria-live="polite" data-testid="upload-status">
      <p>
        <strong>{name}</strong> uploaded. {data ? <StatusBadge status={data.status} /> : null}{' '}
        {!final ? 'Checking the file…' : <Link href={`/documents/${id}`}>Open the document</Link>}
      </p>
      {!final && <progress aria-label="Checking the file" />}
      {problem && (
        <p className="notice error">
          {SDF_ERROR_SENTENCES[problem.code] ?? ''} <code>{problem.code}</code>
          {problem.file ? ` in ${problem.file}` : ''}: {problem.message}
        </p>
      )}
      <ProblemNotice error={error} />
    </div>
  );
}

/** Upload with a real progress bar (bytes sent), then the status followed live. */
export function UploadPanel() {
  const inputRef = useRef<HTMLInputElement>(null);
  const [progress, setProgress] = useState<{ name: string; sent: number; total: number } | null>(null);
  const [uploaded, setUploaded] = useState<{ doc: Schemas['DocumentDto']; name: string } | null>(null);
  const [error, setError] = useState<unknown>(null);

  const upload = async (file: File) => {
    setError(null);
    setUploaded(null);
    setProgress({ name: file.name, sent: 0, total: file.size });
    const body = new FormData();
    body.append('file', file, file.name);
    try {
      const doc = await unwrap(
        api.POST('/sdf', {
          // The client's types describe the multipart field; the browser sends the FormData as it is.
          body: body as unknown as { file: string },
          bodySerializer: (value) => value as unknown as FormData,
          params: { header: { 'Idempotency-Key': crypto.randomUUID() } },
          fetch: fetchWithUploadProgress((sent, total) => setProgress({ name: file.name, sent, total })),
        }),
      );
      if (doc) setUploaded({ doc, name: file.name });
    } catch (e) {
      setError(e);
    } finally {
      setProgress(null);
    }
  };

  return (
    <section className="panel-box upload" aria-labelledby="upload-heading">
      <h2 id="upload-heading">Upload a document</h2>
      <div className="inline-form">
        <label className="button" htmlFor="upload-file">
          Choose an .sdf file
        </label>
        <input
          ref={inputRef}
          id="upload-file"
          className="visually-hidden"
          type="file"
          accept=".sdf,application/zip"
          disabled={progress !== null}
          onChange={(event) => {
            const file = event.target.files?.[0];
            if (file) void upload(file);
            event.target.value = '';
          }}
        />
        <span className="hint">Up to 50 MB. The service checks it and tells you the result.</span>
      </div>
      {progress && (
        <div role="status" aria-live="polite" data-testid="upload-progress">
          <p>
            Uploading <strong>{progress.name}</strong>: {formatBytes(progress.sent)} of {formatBytes(progress.total)}
          </p>
          <progress max={progress.total || 1} value={progress.sent} aria-label={`Uploading ${progress.name}`} />
        </div>
      )}
      {uploaded && <UploadedStatus id={uploaded.doc.id} name={uploaded.name} />}
      <ProblemNotice error={error} />
    </section>
  );
}
