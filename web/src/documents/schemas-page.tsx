import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { ApiProblem, api, unwrap } from '../api/client.js';
import { formatDateTime } from '../format.js';
import { ProblemNotice } from './status.js';
import { FieldError } from '../field-error.js';

/** One registered schema, fetched when the user opens it. */
function SchemaBody({ schemaId, version }: { schemaId: string; version: string }) {
  const { data, error } = useQuery({
    queryKey: ['schema', schemaId, version],
    queryFn: () => unwrap(api.GET('/schemas/{schemaId}', { params: { path: { schemaId } } })),
  });
  if (error) return <ProblemNotice error={error} />;
  if (!data) return <p role="status">Loading…</p>;
  return <pre className="json">{JSON.stringify(data, null, 2)}</pre>;
}

/** The schema registry: what is registered, a schema added from a file, each one readable. */
export function SchemasPage() {
  const queryClient = useQueryClient();
  const list = useQuery({ queryKey: ['schemas'], queryFn: () => unwrap(api.GET('/schemas')) });
  const [schemaId, setSchemaId] = useState('');
  const [version, setVersion] = useState('1.0.0');
  const [file, setFile] = useState<File | null>(null);
  const [formError, setFormError] = useState<{ field: string | null; text: string } | null>(null);
  const [open, setOpen] = useState<string | null>(null);

  const create = useMutation({
    mutationFn: async () => {
      let schema: Record<string, unknown>;
      try {
        schema = JSON.parse(await file!.text()) as Record<string, unknown>;
      } catch {
        throw new ApiProblem(
          400,
          'LOCAL',
          'The file is not JSON. Choose a JSON Schema file (.json).',
          'schema',
          null,
          null,
        );
      }
      return unwrap(api.POST('/schemas', { body: { schema_id: schemaId.trim(), version: version.trim(), schema } }));
    },
    onSuccess: () => {
      setSchemaId('');
      setFile(null);
      setFormError(null);
      void queryClient.invalidateQueries({ queryKey: ['schemas'] });
    },
    onError: (e) => setFormError({ field: e instanceof ApiProblem ? e.field : null, text: e.message }),
  });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!schemaId.trim())
      return setFormError({ field: 'schema_id', text: 'Give the schema an id such as invoice/v1.' });
    if (!file) return setFormError({ field: 'schema', text: 'Choose the JSON Schema file to register.' });
    create.mutate();
  };
  const errorFor = (field: string) => (
    <FieldError id={`${field}-error`} text={formError?.field === field ? formError.text : null} />
  );
  const schemas = list.data?.schemas ?? [];

  return (
    <section>
      <h1 tabIndex={-1}>Schemas</h1>
      <p className="lead">
        Registered JSON Schemas that uploaded files are matched against by their <code>schema_id</code>.
      </p>
      <form className="panel-box" onSubmit={submit} noValidate aria-labelledby="add-schema-heading">
        <h2 id="add-schema-heading">Add a schema</h2>
        <div className="field">
          <label htmlFor="schema-id">Schema id</label>
          <input
            id="schema-id"
            value={schemaId}
            placeholder="invoice/v1"
            onChange={(e) => setSchemaId(e.target.value)}
            aria-invalid={formError?.field === 'schema_id' || undefined}
            aria-describedby={formError?.field === 'schema_id' ? 'schema_id-error' : undefined}
          />
          {errorFor('schema_id')}
        </div>
        <div className="field">
          <label htmlFor="schema-version">Version</label>
          <input id="schema-version" value={version} onChange={(e) => setVersion(e.target.value)} />
          {errorFor('version')}
        </div>
        <div className="field">
          <label htmlFor="schema-file">JSON Schema file</label>
          <input
            id="schema-file"
            type="file"
            accept=".json,application/json,application/schema+json"
            onChange={(e) => setFile(e.target.files?.[0] ?? null)}
            aria-invalid={formError?.field === 'schema' || undefined}
            aria-describedby={formError?.field === 'schema' ? 'schema-error' : undefined}
          />
          {errorFor('schema')}
        </div>
        {formError && formError.field === null && (
          <p className="notice error" role="alert">
            {formError.text}
          </p>
        )}
        <button type="submit" disabled={create.isPending}>
          {create.isPending ? 'Adding…' : 'Add schema'}
        </button>
      </form>
      <h2>Registered schemas</h2>
      <ProblemNotice error={list.error} />
      {list.isPending ? (
        <p role="status">Loading…</p>
      ) : schemas.length === 0 ? (
        <div className="empty">
          <p>No schemas registered yet. Add one above; files that name its id are then checked against it.</p>
        </div>
      ) : (
        <ul className="files">
          {schemas.map((schema) => {
            const key = `${schema.schema_id}@${schema.version}`;
            return (
              <li key={key}>
                <code>{schema.schema_id}</code> <span>version {schema.version}</span>
                <span className="muted">{formatDateTime(schema.created_at)}</span>
                <button
                  type="button"
                  className="secondary"
                  aria-expanded={open === key}
                  onClick={() => setOpen(open === key ? null : key)}
                >
                  {open === key ? 'Hide' : 'View'}
                  <span className="visually-hidden"> {schema.schema_id}</span>
                </button>
                {open === key && <SchemaBody schemaId={schema.schema_id} version={schema.version} />}
              </li>
            );
          })}
        </ul>
      )}
    </section>
  );
}
