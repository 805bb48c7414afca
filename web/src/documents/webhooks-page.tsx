import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { ApiProblem, api, unwrap, type Schemas } from '../api/client.js';
import { formatDateTime } from '../format.js';
import { ProblemNotice } from './status.js';
import { FieldError } from '../field-error.js';

type EventName = Schemas['CreateWebhookDto']['events'][number];
const EVENTS: [EventName, string][] = [
  ['document.uploaded', 'A document was uploaded'],
  ['document.validated', 'A document was checked'],
  ['document.signed', 'A document was signed'],
  ['document.deleted', 'A document was deleted'],
  ['document.signing_failed', 'A signing failed'],
  ['document.erp_pushed', 'A push to the ERP finished'],
];

/** A signing secret for the receiver: 32 random bytes, base64url. */
function newSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return `whsec_${btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '')}`;
}

export function WebhooksPage() {
  const queryClient = useQueryClient();
  const list = useQuery({ queryKey: ['webhooks'], queryFn: () => unwrap(api.GET('/webhooks')) });
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<EventName[]>(['document.validated', 'document.signed']);
  const [created, setCreated] = useState<{ url: string; secret: string } | null>(null);
  const [formError, setFormError] = useState<{ field: string | null; text: string } | null>(null);

  const create = useMutation({
    mutationFn: async (secret: string) => {
      await unwrap(api.POST('/webhooks', { body: { url: url.trim(), secret, events } }));
      return secret;
    },
    onSuccess: (secret) => {
      setCreated({ url: url.trim(), secret });
      setUrl('');
      setFormError(null);
      void queryClient.invalidateQueries({ queryKey: ['webhooks'] });
    },
    onError: (e) => setFormError({ field: e instanceof ApiProblem ? e.field : null, text: e.message }),
  });
  const remove = useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE('/webhooks/{id}', { params: { path: { id } } })),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ['webhooks'] }),
  });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!url.trim()) return setFormError({ field: 'url', text: 'Enter the address that should receive the events.' });
    if (events.length === 0) return setFormError({ field: 'events', text: 'Choose at least one event.' });
    create.mutate(newSecret());
  };
  const webhooks = list.data?.webhooks ?? [];

  return (
    <section>
      <h1 tabIndex={-1}>Webhooks</h1>
      <p className="lead">
        The service calls these addresses when something happens to your documents, signed with HMAC-SHA256 in{' '}
        <code>X-SDF-Signature</code>.
      </p>
      <form className="panel-box" onSubmit={submit} noValidate aria-labelledby="add-webhook-heading">
        <h2 id="add-webhook-heading">Add a webhook</h2>
        <div className="field">
          <label htmlFor="webhook-url">Address</label>
          <input
            id="webhook-url"
            type="url"
            value={url}
            placeholder="https://erp.example.com/sdf-events"
            onChange={(e) => setUrl(e.target.value)}
            aria-invalid={formError?.field === 'url' || undefined}
            aria-describedby={formError?.field === 'url' ? 'url-error' : undefined}
          />
          <FieldError id="url-error" text={formError?.field === 'url' ? formError.text : null} />
        </div>
        <fieldset className="field">
          <legend>Events</legend>
          {EVENTS.map(([name, label]) => (
            <label key={name} className="checkbox-line">
              <input
                type="checkbox"
                checked={events.includes(name)}
                onChange={(e) => setEvents(e.target.checked ? [...events, name] : events.filter((x) => x !== name))}
              />{' '}
              {label} <code>{name}</code>
            </label>
          ))}
          <FieldError text={formError?.field === 'events' ? formError.text : null} />
        </fieldset>
        {formError && formError.field !== 'url' && formError.field !== 'events' && (
          <p className="notice error" role="alert">
            {formError.text}
          </p>
        )}
        <button type="submit" disabled={create.isPending}>
          {create.isPending ? 'Adding…' : 'Add webhook'}
        </button>
      </form>
      {created && (
        <div className="notice warning" role="status" data-testid="webhook-secret">
          <h3>Copy the signing secret now</h3>
          <p>
            Events to <code className="wrap">{created.url}</code> are signed with this secret. It is shown only once;
            store it where your receiver can read it.
          </p>
          <p className="secret">{created.secret}</p>
          <button
            type="button"
            className="secondary"
            onClick={() => void navigator.clipboard?.writeText(created.secret)}
          >
            Copy
          </button>{' '}
          <button type="button" className="link-button" onClick={() => setCreated(null)}>
            I have stored it
          </button>
        </div>
      )}
      <h2>Registered webhooks</h2>
      <ProblemNotice error={list.error ?? remove.error} />
      {list.isPending ? (
        <p role="status">Loading…</p>
      ) : webhooks.length === 0 ? (
        <div className="empty">
          <p>No webhooks yet. Add one above to hear about uploads, checks and signatures.</p>
        </div>
      ) : (
        <ul className="files">
          {webhooks.map((hook) => (
            <li key={hook.id}>
              <code className="wrap">{hook.url}</code>
              <span className="muted">
                {hook.events.join(', ')} · added {formatDateTime(hook.created_at)}
              </span>
              <button
                type="button"
                className="danger"
                onClick={() => remove.mutate(hook.id)}
                disabled={remove.isPending}
              >
                Remove<span className="visually-hidden"> {hook.url}</span>
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
