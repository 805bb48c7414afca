import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { ApiProblem, api, unwrap, type Schemas } from '../api/client.js';
import { ProblemNotice } from '../documents/status.js';
import { formatDateTime } from '../format.js';
import { FieldError } from '../field-error.js';

type AuthType = Schemas['ConfigureConnectorDto']['auth_type'];
type ErpType = Schemas['ConfigureConnectorDto']['erp_type'];
type Connector = Schemas['ConnectorDto'];

/** The secret fields of each way to sign in to the ERP; what is typed is sent once and never shown again. */
const FIELDS: Record<AuthType, { name: string; label: string; secret: boolean; optional?: boolean }[]> = {
  basic: [
    { name: 'username', label: 'User name', secret: false },
    { name: 'password', label: 'Password', secret: true },
  ],
  bearer: [{ name: 'token', label: 'Token', secret: true }],
  oauth2: [
    { name: 'token_url', label: 'Token URL', secret: false },
    { name: 'client_id', label: 'Client ID', secret: false },
    { name: 'client_secret', label: 'Client secret', secret: true },
    { name: 'scope', label: 'Scope', secret: false, optional: true },
  ],
};

const ERP_LABEL: Record<ErpType, string> = { SAP: 'SAP S/4HANA', ORACLE: 'Oracle Fusion Cloud' };

function ConnectorForm({ editing, onDone }: { editing: Connector | null; onDone: (message: string) => void }) {
  const [erp, setErp] = useState<ErpType>(editing?.erp_type ?? 'SAP');
  const [name, setName] = useState(editing?.name ?? '');
  const [baseUrl, setBaseUrl] = useState(editing?.base_url ?? '');
  const [auth, setAuth] = useState<AuthType>(editing?.auth_type ?? 'basic');
  const [secrets, setSecrets] = useState<Record<string, string>>({});
  const [problem, setProblem] = useState<{ field: string | null; text: string } | null>(null);
  const keptAuth = editing !== null && editing.auth_type === auth;

  const save = useMutation({
    mutationFn: async () => {
      const credentials = Object.fromEntries(Object.entries(secrets).filter(([, v]) => v.trim() !== ''));
      if (editing) {
        return unwrap(
          api.PATCH('/connectors/{id}', {
            params: { path: { id: editing.id } },
            body: {
              name: name.trim() || undefined,
              base_url: baseUrl.trim(),
              auth_type: auth,
              ...(Object.keys(credentials).length ? { credentials } : {}),
            },
          }),
        );
      }
      return unwrap(
        api.POST('/connectors/configure', {
          body: {
            erp_type: erp,
            name: name.trim() || undefined,
            base_url: baseUrl.trim(),
            auth_type: auth,
            credentials,
            is_active: true,
          },
        }),
      );
    },
    onSuccess: () => {
      setSecrets({});
      onDone(editing ? 'Connector saved.' : 'Connector added. Test the connection to check the credentials.');
    },
    onError: (e) => setProblem({ field: e instanceof ApiProblem ? e.field : null, text: e.message }),
  });

  const invalid = (field: string) => problem?.field === field || problem?.field?.startsWith(`${field}/`);
  return (
    <form
      className="panel-box"
      aria-labelledby="connector-form-heading"
      noValidate
      onSubmit={(event: FormEvent) => {
        event.preventDefault();
        setProblem(null);
        save.mutate();
      }}
    >
      <h2 id="connector-form-heading">
        {editing ? `Change ${editing.name ?? ERP_LABEL[editing.erp_type]}` : 'Add a connector'}
      </h2>
      <div className="inline-form">
        <div className="field">
          <label htmlFor="erp-type">ERP</label>
          <select
            id="erp-type"
            value={erp}
            disabled={editing !== null}
            onChange={(e) => setErp(e.target.value as ErpType)}
          >
            <option value="SAP">{ERP_LABEL.SAP}</option>
            <option value="ORACLE">{ERP_LABEL.ORACLE}</option>
          </select>
        </div>
        <div className="field">
          <label htmlFor="connector-name">Name (optional)</label>
          <input id="connector-name" value={name} maxLength={200} onChange={(e) => setName(e.target.value)} />
        </div>
      </div>
      <div className="field">
        <label htmlFor="base_url">Address of the ERP</label>
        <input
          id="base_url"
          type="url"
          value={baseUrl}
          placeholder="https://my-s4.example.com"
          onChange={(e) => setBaseUrl(e.target.value)}
          aria-invalid={invalid('base_url') || undefined}
          aria-describedby={invalid('base_url') ? 'base_url-error' : 'base_url-hint'}
        />
        {invalid('base_url') ? (
          <FieldError id="base_url-error" text={problem?.text} />
        ) : (
          <p className="hint" id="base_url-hint">
            An address the service can reach; the managed service takes https only.
          </p>
        )}
      </div>
      <div className="field">
        <label htmlFor="auth-type">Sign-in to the ERP</label>
        <select id="auth-type" value={auth} onChange={(e) => setAuth(e.target.value as AuthType)}>
          <option value="basic">User name and password</option>
          <option value="bearer">Token</option>
          <option value="oauth2">OAuth 2.0 client credentials</option>
        </select>
      </div>
      {FIELDS[auth].map((f) => {
        const stored = keptAuth && editing.credentials_set.includes(f.name);
        return (
          <div className="field" key={f.name}>
            <label htmlFor={`cred-${f.name}`}>
              {f.label}
              {f.optional ? ' (optional)' : ''}
            </label>
            <input
              id={`cred-${f.name}`}
              type={f.secret ? 'password' : 'text'}
              autoComplete={f.secret ? 'new-password' : 'off'}
              value={secrets[f.name] ?? ''}
              placeholder={stored ? 'Stored. Type to replace it.' : ''}
              onChange={(e) => setSecrets((s) => ({ ...s, [f.name]: e.target.value }))}
              aria-invalid={invalid(`credentials/${f.name}`) || undefined}
            />
          </div>
        );
      })}
      <p className="hint">
        Credentials are sealed when saved and never shown again, not even to you; leave a stored one empty to keep it.
      </p>
      {problem && !invalid('base_url') && (
        <p className="notice error" role="alert">
          {problem.text}
        </p>
      )}
      <div className="actions">
        <button type="submit" disabled={save.isPending}>
          {editing ? 'Save connector' : 'Add connector'}
        </button>
        {editing && (
          <button type="button" className="link-button" onClick={() => onDone('')}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}

const HEALTH: Record<string, string> = { healthy: 'Reachable', unhealthy: 'Not reachable', unknown: 'Not tested yet' };

/** ERP connectors (SAP, Oracle): add one with write-only secrets, test the connection, change or delete it. */
export function ConnectorsPage() {
  const queryClient = useQueryClient();
  const [editing, setEditing] = useState<Connector | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [formKey, setFormKey] = useState(0);
  const list = useQuery({ queryKey: ['connectors'], queryFn: () => unwrap(api.GET('/connectors')) });
  const refresh = () => void queryClient.invalidateQueries({ queryKey: ['connectors'] });
  const test = useMutation({
    mutationFn: () => unwrap(api.GET('/connectors/health')),
    onSuccess: (answer) => {
      const results = answer?.connectors ?? [];
      const bad = results.filter((c) => c.health_status !== 'healthy');
      setNotice(
        results.length === 0
          ? 'No active connector to test.'
          : bad.length === 0
            ? 'Every active connector answered.'
            : `${bad.map((c) => `${c.name ?? ERP_LABEL[c.erp_type]}: ${c.reason ?? 'no answer'}`).join('; ')}`,
      );
      refresh();
    },
  });
  const remove = useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE('/connectors/{id}', { params: { path: { id } } })),
    onSuccess: () => {
      setNotice('Connector deleted.');
      refresh();
    },
  });
  const toggle = useMutation({
    mutationFn: (c: Connector) =>
      unwrap(api.PATCH('/connectors/{id}', { params: { path: { id: c.id } }, body: { is_active: !c.is_active } })),
    onSuccess: refresh,
  });
  const connectors = list.data?.connectors ?? [];
  return (
    <section>
      <h1 tabIndex={-1}>ERP connectors</h1>
      <p className="lead">
        Connect SAP S/4HANA or Oracle Fusion Cloud to match invoices with their purchase orders and to push signed
        documents into the ERP. A document&apos;s page shows its pushes.
      </p>
      {notice && (
        <p className="notice" role="status" data-testid="connectors-notice">
          {notice}
        </p>
      )}
      <ProblemNotice error={list.error ?? test.error ?? remove.error ?? toggle.error} />
      {connectors.length === 0 ? (
        list.data && (
          <div className="empty">
            <p>No connector yet. Add one below.</p>
          </div>
        )
      ) : (
        <>
          <div className="table-scroll">
            <table>
              <caption className="visually-hidden">Connectors</caption>
              <thead>
                <tr>
                  <th scope="col">Connector</th>
                  <th scope="col">Address</th>
                  <th scope="col">Connection</th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {connectors.map((c) => (
                  <tr key={c.id} data-testid="connector-row" data-health={c.health_status}>
                    <td>
                      <strong>{c.name ?? ERP_LABEL[c.erp_type]}</strong>
                      <br />
                      <span className="muted">
                        {ERP_LABEL[c.erp_type]}, {c.auth_type}, {c.is_active ? 'active' : 'paused'}
                      </span>
                    </td>
                    <td className="wrap">{c.base_url}</td>
                    <td>
                      {HEALTH[c.health_status] ?? c.health_status}
                      {c.health_reason && <span className="muted"> ({c.health_reason})</span>}
                      {c.last_health_check && (
                        <span className="muted">
                          <br />
                          {formatDateTime(c.last_health_check)}
                        </span>
                      )}
                    </td>
                    <td>
                      <div className="row-actions">
                        <button type="button" className="secondary" onClick={() => setEditing(c)}>
                          Change<span className="visually-hidden"> {c.name ?? c.erp_type}</span>
                        </button>
                        <button type="button" className="secondary" onClick={() => toggle.mutate(c)}>
                          {c.is_active ? 'Pause' : 'Resume'}
                          <span className="visually-hidden"> {c.name ?? c.erp_type}</span>
                        </button>
                        <button
                          type="button"
                          className="danger"
                          onClick={() => {
                            if (window.confirm(`Delete ${c.name ?? ERP_LABEL[c.erp_type]} and its stored credentials?`))
                              remove.mutate(c.id);
                          }}
                        >
                          Delete<span className="visually-hidden"> {c.name ?? c.erp_type}</span>
                        </button>
                      </div>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <div className="actions">
            <button type="button" onClick={() => test.mutate()} disabled={test.isPending}>
              {test.isPending ? 'Testing…' : 'Test the connections'}
            </button>
          </div>
        </>
      )}
      <ConnectorForm
        key={editing?.id ?? `new-${formKey}`}
        editing={editing}
        onDone={(message) => {
          setEditing(null);
          setFormKey((k) => k + 1);
          if (message) setNotice(message);
          refresh();
        }}
      />
    </section>
  );
}
