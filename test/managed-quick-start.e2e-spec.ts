import { randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import https from 'node:https';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { decodeJwt } from './helpers/accounts.js';
import { createDatabaseFromTemplate, dropDatabase, testDatabaseUrl } from './helpers/database.js';
import {
  distCli,
  distMain,
  freePort,
  projectRoot,
  requireBuild,
  runNode,
  runProgram,
  startNode,
  startProgram,
  stop,
  stopGroup,
} from './helpers/processes.js';
import { waitUntil } from './helpers/wait.js';

/** The shell block between the managed walkthrough markers of README.md, as a reader sees it. */
function managedBlock(readme: string): string {
  const match = /<!-- managed-walkthrough:begin -->\s*```sh\n([\s\S]*?)```\s*<!-- managed-walkthrough:end -->/.exec(
    readme,
  );
  if (!match) throw new Error('README.md has no managed walkthrough block');
  return match[1];
}

/** The settings file the stand-ins write: `NAME='value'` lines. */
function readEnvFile(path: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of readFileSync(path, 'utf8').matchAll(/^([A-Z_]+)='([^']*)'$/gm)) out[m[1]] = m[2];
  return out;
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** One request over https to a stand-in, trusting only the stand-ins' CA (as the service is told to). */
function httpsRequest(url: string, ca: string, init: { method?: string; form?: Record<string, string> } = {}) {
  return new Promise<Answer>((resolve, reject) => {
    const body = init.form ? new URLSearchParams(init.form).toString() : undefined;
    const req = https.request(
      url,
      {
        method: init.method ?? 'GET',
        ca,
        headers: body ? { 'Content-Type': 'application/x-www-form-urlencoded' } : {},
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const unescapeHtml = (s: string) => s.replace(/&#(\d+);/g, (_, n: string) => String.fromCharCode(Number(n)));

/** The hidden and named inputs of the first form of a page, and its action. */
function formOf(html: string): { action: string | null; fields: Record<string, string> } {
  const fields: Record<string, string> = {};
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    fields[m[1]] = unescapeHtml(m[2]);
  }
  const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
  return { action: action ? unescapeHtml(action) : null, fields };
}

/**
 * A `jq` first on PATH that behaves as Debian 12's jq 1.6 does on empty input: nothing printed and exit
 * status 0, even with `-e` (jq 1.7 answers 4), whatever jq is installed; it counts such calls.
 */
function jq16Wrapper(dir: string): { bin: string; emptyInputs: () => number } {
  const real = (process.env.PATH ?? '')
    .split(':')
    .map((d) => join(d, 'jq'))
    .find((path) => existsSync(path));
  if (!real) throw new Error('the walkthrough needs jq');
  const bin = join(dir, 'jq16-bin');
  const log = join(dir, 'jq16-empty-inputs');
  mkdirSync(bin);
  writeFileSync(log, '');
  writeFileSync(
    join(bin, 'jq'),
    [
      '#!/usr/bin/env bash',
      'for arg in "$@"; do',
      `  if [ "$arg" = -n ] || [ "$arg" = --null-input ]; then exec '${real}' "$@"; fi`,
      'done',
      'input=$(cat; echo .)',
      'input=${input%.}',
      `if [ -z "\${input//[[:space:]]/}" ]; then echo empty >> '${log}'; exit 0; fi`,
      `printf '%s' "$input" | '${real}' "$@"`,
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
  return { bin, emptyInputs: () => readFileSync(log, 'utf8').split('\n').filter(Boolean).length };
}

/**
 * The mail page behind a loopback server that answers the first `holdBack` requests for the latest mail
 * as an empty mailbox does (404), as when the mail is slower than the script; everything else passes.
 */
async function lateMailbox(target: string, holdBack: number) {
  let notFound = 0;
  const server = createHttpServer((req, res) => {
    if (req.url === '/api/v1/message/latest' && notFound < holdBack) {
      notFound++;
      res.writeHead(404, { 'Content-Type': 'application/json' }).end('{"error":"message not found"}');
      return;
    }
    fetch(`${target}${req.url}`)
      .then(async (answer) => {
        res.writeHead(answer.status, { 'Content-Type': 'application/json' }).end(await answer.text());
      })
      .catch(() => res.writeHead(502).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    notFound: () => notFound,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * The managed deployment as a newcomer meets it: `npm run dev:stand-ins` started as the README says, the
 * built service started with the settings it wrote (its own database, Redis prefix and storage here), the
 * README's managed block run by bash, and then billing, single sign-on and an ERP connector through the
 * stand-ins.
 */
describe('managed quick start with the stand-ins', () => {
  let database: string;
  let dir: string;
  let standIns: ChildProcess;
  let standInsOutput: () => string;
  let service: ChildProcess;
  let baseUrl: string;
  let settings: Record<string, string>;
  let serviceEnv: NodeJS.ProcessEnv;
  let ca: string;
  let mailUrl: string;
  let jq16: ReturnType<typeof jq16Wrapper>;

  const api = async (method: string, path: string, auth: Record<string, string>, body?: unknown) => {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      redirect: 'manual',
      headers: { ...auth, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let json: Record<string, unknown> = {};
    try {
      json = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    } catch {
      // not JSON
    }
    return { status: res.status, body: json, headers: res.headers };
  };

  const mails = async () =>
    (
      (await (await fetch(`${mailUrl}/api/v1/messages`)).json()) as {
        messages: { ID: string; To: { Address: string }[]; Subject: string }[];
      }
    ).messages;

  /** Sign-up, the mailed link, sign-in: the owner's access token and the organization's id. */
  async function signUp(email: string, slug: string): Promise<{ access: string; tenantId: string }> {
    const password = 'quince meadow harbour 17';
    const registered = await api('POST', '/v1/auth/register', {}, { email, password, organization: slug, slug });
    expect(registered.status).toBe(202);
    expect(registered.body).toEqual({ email });
    const mail = await waitUntil(
      async () => (await mails()).find((m) => m.To[0].Address === email),
      `the verification mail to ${email}`,
    );
    const text = ((await (await fetch(`${mailUrl}/api/v1/message/${mail.ID}`)).json()) as { Text: string }).Text;
    const token = /verify-email\?token=([\w-]+)/.exec(text)![1];
    expect((await api('POST', '/v1/auth/verify-email', {}, { token })).status).toBe(200);
    const login = await api('POST', '/v1/auth/login', {}, { email, password });
    expect(login.status).toBe(200);
    const access = login.body.access_token as string;
    return { access, tenantId: decodeJwt(access).tenant_id as string };
  }

  beforeAll(async () => {
    requireBuild(distMain);
    requireBuild(distCli);
    database = await createDatabaseFromTemplate(inject('templateDatabase'));
    dir = mkdtempSync(join(tmpdir(), 'sdf-managed-'));
    jq16 = jq16Wrapper(dir);
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    const base = { PATH: process.env.PATH, HOME: process.env.HOME };
    const started = await startProgram(
      'npm',
      ['run', '-s', 'dev:stand-ins', '--', '--any-ports', '--dir', join(dir, 'stand-ins'), '--service-url', baseUrl],
      base,
      (line) => line === 'stand-ins ready',
      120_000,
      true,
    );
    standIns = started.child;
    standInsOutput = started.output;
    settings = readEnvFile(join(dir, 'stand-ins', 'service.env'));
    ca = readFileSync(settings.NODE_EXTRA_CA_CERTS, 'utf8');
    mailUrl = settings.MAIL_URL;
    serviceEnv = {
      ...base,
      ...settings,
      DATABASE_URL: testDatabaseUrl(database),
      DATABASE_RUN_MIGRATIONS: 'false',
      DATABASE_POOL_SIZE: '4',
      REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
      REDIS_PREFIX: `sdfm_${randomBytes(5).toString('hex')}`,
      STORAGE_LOCAL_DIR: join(dir, 'storage'),
      VALIDATION_POOL_WORKERS: '1',
      LOG_LEVEL: 'info',
    };
    service = (
      await startNode([distMain], { ...serviceEnv, PORT: String(port), HOST: '127.0.0.1' }, (line) =>
        line.includes('"listening"'),
      )
    ).child;
  }, 180_000);

  afterAll(async () => {
    if (service) await stop(service);
    if (standIns) await stopGroup(standIns);
    if (database) await dropDatabase(database);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('the stand-ins wrote settings for a managed service of its own, trusting their CA', () => {
    expect(settings).toMatchObject({
      DEPLOYMENT_MODE: 'managed',
      DATABASE_URL: expect.stringMatching(/\/sdf_managed$/),
      PUBLIC_BASE_URL: baseUrl,
      SMTP_URL: expect.stringMatching(/^smtp:\/\/127\.0\.0\.1:\d+$/),
      MAIL_URL: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
      STRIPE_API_BASE: expect.stringMatching(/^https:\/\/127\.0\.0\.1:\d+$/),
    });
    for (const name of ['JWT_SECRET', 'ADMIN_JWT_SECRET', 'MASTER_KEY']) expect(settings[name]).toBeTruthy();
    // Printed for a person too, but never the secrets.
    expect(standInsOutput()).toContain(`SMTP_URL=${settings.SMTP_URL}`);
    // The walkthrough's mail address as a setting a person can paste, not only inside a comment.
    expect(standInsOutput()).toMatch(new RegExp(`^MAIL_URL=${settings.MAIL_URL}$`, 'm'));
    expect(standInsOutput()).not.toContain(settings.MASTER_KEY);
    expect(ca).toContain('BEGIN CERTIFICATE');
  });

  it('on a taken fixed port, the stand-ins stop with one line naming the port and --any-ports', async () => {
    // The first fixed port they take is the SMTP server's; held here unless something else holds it already.
    const holder = createServer();
    await new Promise<void>((resolve) => {
      holder.once('error', () => resolve());
      holder.listen(1025, '127.0.0.1', resolve);
    });
    try {
      // Built by the start above; a start that wrongly succeeds is ended by the timeout.
      const run = await runProgram(
        process.execPath,
        [join(projectRoot, 'dist', 'test', 'stand-ins', 'main.js'), '--dir', join(dir, 'taken')],
        { env: { PATH: process.env.PATH }, timeoutMs: 60_000 },
      );
      expect(run.code).toBe(1);
      expect(run.stderr).toBe(
        'stand-ins: port 1025 (the SMTP mail server) is taken; run with --any-ports to pick free ports: ' +
          'npm run dev:stand-ins -- --any-ports\n',
      );
    } finally {
      holder.close();
    }
  });

  /** The block run by bash as pasted (no shell options of its own), with `jq` as jq 1.6 behaves. */
  async function runBlock(mail: string, after = '') {
    const script = managedBlock(readFileSync(join(projectRoot, 'README.md'), 'utf8'));
    const work = mkdtempSync(join(dir, 'checkout-'));
    const entries = ['package.json', 'dist', 'examples'];
    for (const entry of entries) symlinkSync(join(projectRoot, entry), join(work, entry));
    const temp = mkdtempSync(join(dir, 'tmp-'));
    const run = await runProgram('bash', ['-c', script + after], {
      cwd: work,
      env: {
        PATH: `${jq16.bin}:${process.env.PATH}`,
        HOME: process.env.HOME,
        SDF_URL: baseUrl,
        MAIL_URL: mail,
        TMPDIR: temp,
      },
      timeoutMs: 150_000,
    });
    expect(readdirSync(work).sort()).toEqual([...entries].sort());
    const outs = (file: string) => readdirSync(temp).filter((name) => existsSync(join(temp, name, file)));
    return { ...run, outs };
  }

  it(
    "runs the README's managed block as pasted, with jq 1.6 and a fresh mailbox: sign-up mail, verification, sign-in, key, upload, sign",
    { timeout: 180_000 },
    async () => {
      // Fresh: nothing in the mailbox yet, and its first answers to "latest" are 404 however fast the
      // mail is (a loopback server in front of the mail page holds the mail back for three polls).
      expect(await mails()).toEqual([]);
      const late = await lateMailbox(mailUrl, 3);
      try {
        const run = await runBlock(late.url);
        expect(run.code, run.stdout + run.stderr).toBe(0);
        expect(run.stdout.match(/VALID, trusted/g)).toHaveLength(1);
        expect(run.stderr).toBe('');
        expect(late.notFound()).toBe(3);
        // jq met the empty answers and, as 1.6 does, called them a success: the block did not.
        expect(jq16.emptyInputs()).toBeGreaterThanOrEqual(3);
        expect(run.outs('signed.sdf')).toHaveLength(1);
      } finally {
        await late.close();
      }
      // The verification mail went through the stand-ins' SMTP server to the address that signed up.
      const received = await mails();
      expect(received.map((m) => [m.To[0].Address, m.Subject])).toContainEqual([
        'owner@acme.example',
        'Confirm your email address',
      ]);
    },
  );

  it(
    'a failing step stops the block there, and the shell it was pasted into goes on',
    { timeout: 60_000 },
    async () => {
      const before = (await mails()).length;
      // Run again unchanged, the slug is taken: sign-up answers 409 and nothing after it runs.
      const run = await runBlock(mailUrl, '\necho "shell still open after $?"\n');
      expect(run.code).toBe(0);
      expect(run.stderr).toBe('curl: (22) The requested URL returned error: 409\n');
      expect(run.stdout).toBe('true\nshell still open after 22\n');
      expect(run.outs('invoice.sdf')).toEqual([]);
      expect((await mails()).length).toBe(before);
    },
  );

  it('Stripe: checkout on the stand-in pays, its signed events reach the service, and the plan changes', async () => {
    const { access } = await signUp('billing@globex.example', 'globex');
    const owner = { Authorization: `Bearer ${access}` };
    expect((await api('GET', '/v1/billing/plan', owner)).body.plan).toBe('free');
    const checkout = await api('POST', '/v1/billing/checkout', owner, { plan: 'developer' });
    expect(checkout.status).toBe(200);
    const url = checkout.body.url as string;
    expect(url.startsWith(settings.STRIPE_API_BASE)).toBe(true);

    const page = await httpsRequest(url, ca);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Pay with a test card');
    const paid = await httpsRequest(url, ca, { method: 'POST' });
    expect(paid.status).toBe(303);
    expect(paid.headers.location).toBe(`${settings.STRIPE_RETURN_URL}?checkout=success`);
    expect((await api('GET', '/v1/billing/plan', owner)).body.plan).toBe('developer');
  });

  it("SAML: the operator turns it on with the stand-in's metadata, and its sign-in form signs a user in", async () => {
    const { tenantId } = await signUp('it@initech.example', 'initech');
    const token = await runNode([distCli, 'admin', 'token', '--subject', 'operator'], serviceEnv);
    expect(token.code, token.stderr).toBe(0);
    const admin = { Authorization: `Bearer ${token.stdout.trim()}` };
    const metadataUrl = /^# saml: +metadata (https:\/\/[^\s,]+)/m.exec(standInsOutput())![1];
    const metadata = await httpsRequest(metadataUrl, ca);
    expect(metadata.status).toBe(200);
    const patched = await api('PATCH', `/admin/tenants/${tenantId}`, admin, {
      saml_enabled: true,
      saml_entity_id: 'sdf-initech',
      saml_metadata_xml: metadata.text,
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);

    const login = await api('GET', '/saml/initech/login', {});
    expect(login.status).toBe(302);
    const form = await httpsRequest(login.headers.get('location')!, ca);
    expect(form.status).toBe(200);
    expect(form.text).toContain('<label for="email">Email</label>');
    const { fields } = formOf(form.text);
    const signed = await httpsRequest(`${new URL(metadataUrl).origin}/sso`, ca, {
      method: 'POST',
      form: { ...fields, email: 'milton@initech.example' },
    });
    expect(signed.status).toBe(200);
    const post = formOf(signed.text);
    expect(post.action).toBe(`${baseUrl}/saml/initech/acs`);
    const acs = await fetch(post.action!, { method: 'POST', body: new URLSearchParams(post.fields) });
    expect(acs.status).toBe(200);
    const tokens = (await acs.json()) as { access_token: string; user: { email: string } };
    expect(tokens.user.email).toBe('milton@initech.example');
    const me = await api('GET', '/tenant', { Authorization: `Bearer ${tokens.access_token}` });
    expect(me.status).toBe(200);
  });

  it('ERP: the example invoice matches the purchase order in the SAP stand-in over https, and a push creates it', async () => {
    const { access, tenantId } = await signUp('ap@umbrella.example', 'umbrella');
    const owner = { Authorization: `Bearer ${access}` };
    const created = await api('POST', '/v1/api-keys', owner, { name: 'connector test' });
    const key = { 'X-API-Key': created.body.key as string };
    const sapBody = JSON.parse(/^# +(\{"erp_type":"SAP".*\})$/m.exec(standInsOutput())![1]) as Record<string, unknown>;

    // Loopback is refused on the managed deployment until the operator lists it for the organization.
    const refused = await api('POST', '/connectors/configure', key, sapBody);
    expect(refused.status).toBe(400);
    const token = await runNode([distCli, 'admin', 'token', '--subject', 'operator'], serviceEnv);
    const admin = { Authorization: `Bearer ${token.stdout.trim()}` };
    const listed = await api('PUT', `/admin/tenants/${tenantId}/connector-private-targets`, admin, {
      targets: ['127.0.0.1/32'],
    });
    expect(listed.status).toBe(200);
    const connector = await api('POST', '/connectors/configure', key, sapBody);
    expect(connector.status, JSON.stringify(connector.body)).toBe(201);
    const health = await api('GET', '/connectors/health', key);
    expect(JSON.stringify(health.body)).toContain('"healthy"');

    const file = join(dir, 'invoice.sdf');
    const ex = (name: string) => join(projectRoot, 'examples', 'invoice', name);
    const packed = await runNode(
      [
        distCli,
        'pack',
        '--data',
        ex('data.json'),
        '--schema',
        ex('schema.json'),
        '--meta',
        ex('meta.json'),
        '-o',
        file,
      ],
      { PATH: process.env.PATH },
    );
    expect(packed.code, packed.stderr).toBe(0);
    const form = new FormData();
    form.append('file', new Blob([readFileSync(file)]), 'invoice.sdf');
    const uploaded = await fetch(`${baseUrl}/upload`, { method: 'POST', headers: key, body: form });
    expect(uploaded.status).toBe(201);
    const id = ((await uploaded.json()) as { id: string }).id;
    // Polled as a client polls, once a second: asked every 25 ms, a slow validation spent the tenant's 60
    // requests a minute on waiting, and the push after it met a 429.
    await waitUntil(
      async () => (await api('GET', `/sdf/${id}`, key)).body.status === 'valid',
      'the invoice to be valid',
      60_000,
      1000,
    );

    const match = await api('POST', '/connectors/match', key, { document_id: id });
    expect(match.status, JSON.stringify(match.body)).toBe(200);
    expect(match.body).toMatchObject({ matched: true, differences: [] });
    expect(match.body.erp_document).toMatchObject({ id: 'PO-2026-0815' });

    const push = await api('POST', `/connectors/push-to-erp/${id}`, key, { connector_id: connector.body.id });
    expect(push.status).toBe(202);
    const done = await waitUntil(
      async () => {
        const p = await api('GET', `/connectors/pushes/${push.body.push_id as string}`, key);
        return p.body.status === 'succeeded' || p.body.status === 'failed' ? p.body : null;
      },
      'the push to settle',
      60_000,
      1000,
    );
    expect(done).toMatchObject({ status: 'succeeded', erp_document_id: expect.any(String) });
    // The SAP stand-in saw the supplier invoice created over https.
    expect(standInsOutput()).toMatch(
      /^sap: POST \/sap\/opu\/odata\/sap\/API_SUPPLIERINVOICE_PROCESS_SRV\/A_SupplierInvoice -> 201$/m,
    );
    // Two programs started, an upload validated and a push settled: each wait is bounded at a minute above,
    // so the whole is given room for both.
  }, 180_000);
});
