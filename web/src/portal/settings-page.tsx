import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState, type FormEvent } from 'react';
import { ApiProblem, api, unwrap, type Schemas } from '../api/client.js';
import { ProblemNotice } from '../documents/status.js';
import { formatDateTime } from '../format.js';
import { planName } from './plan-name.js';
import { useProfile } from './team-page.js';
import { FieldError } from '../field-error.js';
import { startSso } from '../sso.js';

function CopyField({ id, label, value }: { id: string; label: string; value: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <div className="inline-form">
        <input id={id} readOnly value={value} onFocus={(e) => e.target.select()} data-testid={id} />
        <button
          type="button"
          className="secondary"
          onClick={() =>
            void navigator.clipboard?.writeText(value).then(
              () => setCopied(true),
              () => setCopied(false),
            )
          }
        >
          {copied ? 'Copied' : 'Copy'}
          <span className="visually-hidden"> {label}</span>
        </button>
      </div>
    </div>
  );
}

function OrganisationName({ canRename }: { canRename: boolean }) {
  const queryClient = useQueryClient();
  const org = useQuery({ queryKey: ['organization'], queryFn: () => unwrap(api.GET('/v1/account/organization')) });
  const [name, setName] = useState('');
  const [saved, setSaved] = useState(false);
  useEffect(() => {
    if (org.data) setName(org.data.name);
  }, [org.data]);
  const rename = useMutation({
    mutationFn: () => unwrap(api.PATCH('/v1/account/organization', { body: { name: name.trim() } })),
    onSuccess: () => {
      setSaved(true);
      void queryClient.invalidateQueries({ queryKey: ['organization'] });
    },
  });
  if (!org.data) return <ProblemNotice error={org.error} />;
  return (
    <form
      onSubmit={(event: FormEvent) => {
        event.preventDefault();
        setSaved(false);
        rename.mutate();
      }}
      noValidate
    >
      <dl className="facts">
        <dt>Short name</dt>
        <dd>
          <code>{org.data.slug}</code> <span className="muted">(used for single sign-on; it does not change)</span>
        </dd>
        <dt>Plan</dt>
        <dd data-testid="organisation-plan">{planName(org.data.plan)}</dd>
        <dt>Created</dt>
        <dd>{formatDateTime(org.data.created_at)}</dd>
      </dl>
      <div className="field">
        <label htmlFor="org-name">Name</label>
        <input
          id="org-name"
          value={name}
          maxLength={200}
          readOnly={!canRename}
          onChange={(e) => setName(e.target.value)}
          aria-describedby={rename.error ? 'org-name-error' : undefined}
          aria-invalid={rename.error ? true : undefined}
        />
        <FieldError id="org-name-error" text={rename.error?.message} />
      </div>
      {saved && (
        <p className="notice ok" role="status">
          Saved.
        </p>
      )}
      {canRename && (
        <button type="submit" disabled={rename.isPending || !name.trim()}>
          Save name
        </button>
      )}
    </form>
  );
}

type Sso = Schemas['SsoSettingsDto'];

/** The owner's single sign-on: our side to copy into the identity provider, theirs to give us, a test. */
function SingleSignOn() {
  const queryClient = useQueryClient();
  const sso = useQuery({ queryKey: ['sso'], queryFn: () => unwrap(api.GET('/v1/account/sso')) });
  const [source, setSource] = useState<'url' | 'xml'>('url');
  const [url, setUrl] = useState('');
  const [xml, setXml] = useState('');
  const [idpInitiated, setIdpInitiated] = useState(false);
  const [problem, setProblem] = useState<{ field: string | null; text: string } | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  useEffect(() => {
    if (!sso.data) return;
    setUrl(sso.data.metadata_url ?? '');
    setIdpInitiated(sso.data.idp_initiated);
    if (!sso.data.metadata_url && sso.data.metadata_xml_set) setSource('xml');
  }, [sso.data]);

  const save = useMutation({
    mutationFn: (body: Schemas['UpdateSsoSettingsDto']) => unwrap(api.PUT('/v1/account/sso', { body })),
    onSuccess: (answer, body) => {
      setProblem(null);
      setSaved(
        body.enabled === false
          ? 'Single sign-on is off. Members sign in with their passwords.'
          : answer?.enabled
            ? 'Single sign-on is on. Try it with the test sign-in below.'
            : 'Saved. Turn single sign-on on when the identity provider is ready.',
      );
      queryClient.setQueryData(['sso'], answer);
    },
    onError: (e) => {
      setSaved(null);
      setProblem({ field: e instanceof ApiProblem ? e.field : null, text: e.message });
    },
  });

  const submit = (enabled: boolean) => (event?: FormEvent) => {
    event?.preventDefault();
    const body: Schemas['UpdateSsoSettingsDto'] = { enabled, idp_initiated: idpInitiated };
    if (source === 'url') body.metadata_url = url.trim() || null;
    else if (xml.trim()) body.metadata_xml = xml.trim();
    if (source === 'url' && url.trim()) body.metadata_xml = null;
    save.mutate(body);
  };

  const s: Sso | undefined = sso.data;
  if (!s) return <ProblemNotice error={sso.error} />;
  const fieldError = (field: string) => (
    <FieldError id={`${field}-error`} text={problem?.field === field ? problem.text : null} />
  );
  return (
    <>
      <p data-testid="sso-state">
        Single sign-on is <strong>{s.enabled ? 'on' : 'off'}</strong>.
        {s.enabled && ' Members can sign in through your identity provider with the organisation’s short name.'}
      </p>
      <h3>1. Give your identity provider our details</h3>
      <CopyField id="sp-entity-id" label="Entity ID (audience)" value={s.sp_entity_id} />
      <CopyField id="sp-acs-url" label="Assertion consumer service URL (HTTP-POST)" value={s.acs_url} />
      <CopyField id="sp-metadata-url" label="Our metadata URL" value={s.sp_metadata_url} />
      <p className="hint">Name ID format: email address. Assertions must be signed.</p>

      <h3>2. Give us your identity provider&apos;s metadata</h3>
      <form onSubmit={submit(s.enabled)} noValidate>
        <fieldset className="choice">
          <legend>Metadata from</legend>
          <label>
            <input type="radio" name="source" checked={source === 'url'} onChange={() => setSource('url')} /> A URL
          </label>
          <label>
            <input type="radio" name="source" checked={source === 'xml'} onChange={() => setSource('xml')} /> Pasted XML
          </label>
        </fieldset>
        {source === 'url' ? (
          <div className="field">
            <label htmlFor="metadata_url">Metadata URL</label>
            <input
              id="metadata_url"
              type="url"
              value={url}
              placeholder="https://idp.example.com/metadata"
              onChange={(e) => setUrl(e.target.value)}
              aria-invalid={problem?.field === 'metadata_url' || undefined}
              aria-describedby={problem?.field === 'metadata_url' ? 'metadata_url-error' : undefined}
            />
            {fieldError('metadata_url')}
          </div>
        ) : (
          <div className="field">
            <label htmlFor="metadata_xml">Metadata XML</label>
            <textarea
              id="metadata_xml"
              rows={6}
              value={xml}
              placeholder={s.metadata_xml_set ? 'Stored. Paste new XML to replace it.' : '<md:EntityDescriptor …>'}
              onChange={(e) => setXml(e.target.value)}
              aria-invalid={problem?.field === 'metadata_xml' || undefined}
              aria-describedby={problem?.field === 'metadata_xml' ? 'metadata_xml-error' : undefined}
            />
            {fieldError('metadata_xml')}
          </div>
        )}
        <div className="field checkbox">
          <label>
            <input type="checkbox" checked={idpInitiated} onChange={(e) => setIdpInitiated(e.target.checked)} /> Accept
            sign-ins started at the identity provider (its app tile)
          </label>
        </div>
        {problem && !['metadata_url', 'metadata_xml'].includes(problem.field ?? '') && (
          <p className="notice error" role="alert">
            {problem.text}
          </p>
        )}
        {saved && (
          <p className="notice ok" role="status" data-testid="sso-saved">
            {saved}
          </p>
        )}
        <div className="actions">
          <button type="submit" className="secondary" disabled={save.isPending}>
            Save
          </button>
          {!s.enabled && (
            <button type="button" onClick={() => submit(true)()} disabled={save.isPending}>
              Save and turn on single sign-on
            </button>
          )}
          {s.enabled && (
            <button type="button" className="danger" onClick={() => submit(false)()} disabled={save.isPending}>
              Turn off single sign-on
            </button>
          )}
        </div>
      </form>
      {s.idp_entity_id && (
        <dl className="facts" data-testid="idp-facts">
          <dt>Identity provider</dt>
          <dd className="wrap">{s.idp_entity_id}</dd>
          <dt>Its sign-in URL</dt>
          <dd className="wrap">{s.idp_sso_url}</dd>
          <dt>Signing certificates</dt>
          <dd>{s.idp_certificates}</dd>
          {s.metadata_refreshed_at && (
            <>
              <dt>Metadata read</dt>
              <dd>{formatDateTime(s.metadata_refreshed_at)}</dd>
            </>
          )}
        </dl>
      )}
      {s.metadata_error && (
        <p className="notice error" role="alert">
          The last metadata refresh failed: {s.metadata_error}. The copy read before stays in use.
        </p>
      )}
      <h3>3. Test it</h3>
      {s.enabled ? (
        <p>
          <button
            type="button"
            className="link-button"
            onClick={() => startSso(decodeURIComponent(new URL(s.login_url).pathname.split('/')[2] ?? ''))}
            data-testid="sso-test"
          >
            Test sign-in through your identity provider
          </button>{' '}
          <span className="hint">
            (you come back to the portal and are asked before your session is switched to the person who signs in there)
          </span>
        </p>
      ) : (
        <p className="hint">Turn single sign-on on to test it.</p>
      )}
    </>
  );
}

/** The organisation: its name for managers, and single sign-on for the owner. */
export function SettingsPage() {
  const profile = useProfile();
  const role = profile.data?.role;
  return (
    <section className="narrow">
      <h1 tabIndex={-1}>Organisation settings</h1>
      <div className="panel-box" aria-labelledby="org-heading" role="region">
        <h2 id="org-heading">Organisation</h2>
        <OrganisationName canRename={role === 'owner' || role === 'admin'} />
      </div>
      <div className="panel-box" aria-labelledby="sso-settings-heading" role="region">
        <h2 id="sso-settings-heading">Single sign-on (SAML)</h2>
        {role === 'owner' ? (
          <SingleSignOn />
        ) : (
          role && <p className="notice">Only the organisation&apos;s owner configures single sign-on.</p>
        )}
      </div>
    </section>
  );
}
