import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useRef, useState, type FormEvent } from 'react';
import { ApiProblem, api, unwrap, type Schemas } from '../api/client.js';
import { ProblemNotice } from '../documents/status.js';
import { formatDateTime } from '../format.js';
import { FieldError } from '../field-error.js';

/** The organisation's API keys: created with a name and optional expiry, the raw key shown once. */
export function ApiKeysPage() {
  const queryClient = useQueryClient();
  const list = useQuery({ queryKey: ['api-keys'], queryFn: () => unwrap(api.GET('/v1/api-keys')) });
  const [name, setName] = useState('');
  const [expires, setExpires] = useState('');
  const [created, setCreated] = useState<Schemas['CreatedApiKeyDto'] | null>(null);
  const [formError, setFormError] = useState<{ field: string | null; text: string } | null>(null);
  const [revoking, setRevoking] = useState<Schemas['ApiKeyDto'] | null>(null);
  const dialogRef = useRef<HTMLDialogElement>(null);

  const create = useMutation({
    mutationFn: () =>
      unwrap(
        api.POST('/v1/api-keys', {
          body: { name: name.trim(), ...(expires ? { expires_at: `${expires}T23:59:59Z` } : {}) },
        }),
      ),
    onSuccess: (key) => {
      setCreated(key ?? null);
      setName('');
      setExpires('');
      setFormError(null);
      void queryClient.invalidateQueries({ queryKey: ['api-keys'] });
    },
    onError: (e) => setFormError({ field: e instanceof ApiProblem ? e.field : null, text: e.message }),
  });
  const revoke = useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE('/v1/api-keys/{id}', { params: { path: { id } } })),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ['api-keys'] }),
  });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!name.trim()) return setFormError({ field: 'name', text: 'Name the key after what will use it.' });
    create.mutate();
  };
  const keys = list.data?.keys ?? [];
  return (
    <section>
      <h1 tabIndex={-1}>API keys</h1>
      <p className="lead">
        Programs use an API key to call this service for your organisation (header <code>X-API-Key</code>).
      </p>
      <form className="panel-box" onSubmit={submit} noValidate aria-labelledby="new-key-heading">
        <h2 id="new-key-heading">Create a key</h2>
        <div className="field">
          <label htmlFor="key-name">Name</label>
          <input
            id="key-name"
            value={name}
            placeholder="ERP integration"
            onChange={(e) => setName(e.target.value)}
            aria-invalid={formError?.field === 'name' || undefined}
            aria-describedby={formError?.field === 'name' ? 'key-name-error' : undefined}
          />
          <FieldError id="key-name-error" text={formError?.field === 'name' ? formError.text : null} />
        </div>
        <div className="field">
          <label htmlFor="key-expires">Expires after (optional)</label>
          <input id="key-expires" type="date" value={expires} onChange={(e) => setExpires(e.target.value)} />
        </div>
        {formError && formError.field !== 'name' && (
          <p className="notice error" role="alert">
            {formError.text}
          </p>
        )}
        <button type="submit" disabled={create.isPending}>
          {create.isPending ? 'Creating…' : 'Create key'}
        </button>
      </form>
      {created && (
        <div className="notice warning" role="status" data-testid="new-key">
          <h3>Copy the key now: it is shown only this once</h3>
          <p>
            The service keeps only a hash of it. If it is lost, revoke it and create another. Keep it where only the
            program that uses it can read it.
          </p>
          <p className="secret" data-testid="raw-key">
            {created.key}
          </p>
          <button type="button" className="secondary" onClick={() => void navigator.clipboard?.writeText(created.key)}>
            Copy
          </button>{' '}
          <button type="button" className="link-button" onClick={() => setCreated(null)}>
            I have stored it
          </button>
        </div>
      )}
      <h2>Keys</h2>
      <ProblemNotice error={list.error ?? revoke.error} />
      {list.isPending ? (
        <p role="status">Loading…</p>
      ) : keys.length === 0 ? (
        <div className="empty">
          <p>No API keys yet. Create one above for each program that calls the service.</p>
        </div>
      ) : (
        <div className="table-scroll">
          <table>
            <caption className="visually-hidden">API keys of the organisation</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Key</th>
                <th scope="col">Status</th>
                <th scope="col" className="hide-narrow">
                  Expires
                </th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {keys.map((key) => (
                <tr key={key.id} data-testid="key-row">
                  <td>{key.name ?? '—'}</td>
                  <td>
                    <code>{key.key_prefix}…</code>
                  </td>
                  <td>{key.status}</td>
                  <td className="hide-narrow">{key.expires_at ? formatDateTime(key.expires_at) : 'Never'}</td>
                  <td>
                    {key.status === 'active' && (
                      <button
                        type="button"
                        className="danger"
                        onClick={() => {
                          setRevoking(key);
                          dialogRef.current?.showModal();
                        }}
                      >
                        Revoke<span className="visually-hidden"> {key.name ?? key.key_prefix}</span>
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <dialog ref={dialogRef} aria-labelledby="revoke-heading">
        <h2 id="revoke-heading">Revoke {revoking?.name ?? 'this key'}?</h2>
        <p>Programs using it are refused from now on. This cannot be undone.</p>
        <div className="actions">
          <button
            type="button"
            className="danger"
            onClick={() => {
              dialogRef.current?.close();
              if (revoking) revoke.mutate(revoking.id);
            }}
          >
            Revoke the key
          </button>
          <button type="button" className="secondary" onClick={() => dialogRef.current?.close()}>
            Keep it
          </button>
        </div>
      </dialog>
    </section>
  );
}
