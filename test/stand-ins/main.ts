/**
 * `npm run dev:stand-ins`: the test suite's stand-ins for the outside services of the managed deployment,
 * started on loopback for a person to try the service with: a mail server with a page of what it received,
 * Stripe (Checkout pays with a button; its events go to the service signed), a SAML identity provider
 * (a sign-in form, signed responses) and SAP S/4HANA and Oracle Fusion holding the examples' purchase
 * order and delivery. Everything a service calls speaks https with a certificate from a local CA made on
 * first start. The settings to give the service are printed and written to `<dir>/service.env`, with
 * secrets made on first start and kept, and a database, Redis prefix and storage folder of their own, so a
 * managed trial never meets the data of a self-hosted one.
 *
 *   --any-ports          every stand-in on a free port instead of the fixed ones (1025, 8025, 4400 to 4403)
 *   --service-url <url>  where the service runs (Stripe's events go there), default http://localhost:3000
 *   --dir <dir>          where the local CA is kept, default data/stand-ins
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ErpStandIn } from '../helpers/erp-standin.js';
import { OracleStandIn } from '../helpers/oracle-standin.js';
import { generateIdpKey, TestIdp } from '../helpers/saml-idp.js';
import { SapStandIn } from '../helpers/sap-standin.js';
import { startSmtpSink } from '../helpers/smtp.js';
import { StripeStandIn } from '../helpers/stripe-stand-in.js';
import { localCa } from '../helpers/tls.js';
import { startMailPage } from './mail-page.js';

// Built into dist/test/stand-ins/: three folders up is the project.
const projectRoot = fileURLToPath(new URL('../../..', import.meta.url));

function option(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const anyPorts = process.argv.includes('--any-ports');
const port = (fixed: number) => (anyPorts ? 0 : fixed);
/** What listens on each fixed port, to name in the error when one is taken. */
const FIXED_PORTS: Record<number, string> = {
  1025: 'the SMTP mail server',
  8025: 'the mail page',
  4400: 'the SAML identity provider',
  4401: 'SAP',
  4402: 'Oracle',
  4403: 'Stripe',
};
const serviceUrl = (option('--service-url') ?? 'http://localhost:3000').replace(/\/$/, '');
const dir = resolve(projectRoot, option('--dir') ?? 'data/stand-ins');

const STAND_IN_CREDENTIALS = {
  sap: { auth_type: 'basic', username: 'sdf', password: 'stand-in-sap-password' },
  oracle: { auth_type: 'oauth2', client_id: 'sdf', client_secret: 'stand-in-oracle-secret' },
  stripe: { secretKey: 'sk_test_stand_in', webhookSecret: 'whsec_stand_in' },
} as const;

const STRIPE_PRICES = { developer: 'price_developer', team: 'price_team', business: 'price_business' };
/** What the stand-in's prices cost, per month, in cents. */
const STRIPE_PRICE_AMOUNTS = {
  [STRIPE_PRICES.developer]: { unit_amount: 1900, currency: 'eur', interval: 'month' },
  [STRIPE_PRICES.team]: { unit_amount: 9900, currency: 'eur', interval: 'month' },
  [STRIPE_PRICES.business]: { unit_amount: 39900, currency: 'eur', interval: 'month' },
} as const;

interface ExampleOrder {
  order_number: string;
  supplier: { name: string; id: string };
  items: { description: string; quantity: number; unit_price: { amount: string; currency: string } }[];
  total: { amount: string; currency: string };
}
interface ExampleNomination {
  nomination_ref: string;
  gas_day: string;
  shipper: { name: string; eic: string };
}

const readJson = <T>(path: string): T => JSON.parse(readFileSync(join(projectRoot, path), 'utf8')) as T;

/** Both ERPs hold the purchase order of examples/purchase-order, which examples/invoice bills, and the
 * delivery examples/nomination schedules. */
function seed(sap: SapStandIn, oracle: OracleStandIn): { order: string; delivery: string } {
  const po = readJson<ExampleOrder>('examples/purchase-order/data.json');
  const nomination = readJson<ExampleNomination>('examples/nomination/data.json');
  sap.orders.set(po.order_number, {
    PurchaseOrder: po.order_number,
    Supplier: po.supplier.id,
    DocumentCurrency: po.total.currency,
    items: po.items.map((item, i) => ({
      PurchaseOrderItem: String((i + 1) * 10),
      PurchaseOrderItemText: item.description,
      OrderQuantity: item.quantity.toFixed(3),
      NetPriceAmount: item.unit_price.amount,
    })),
  });
  oracle.orders.set(po.order_number, {
    OrderNumber: po.order_number,
    Supplier: po.supplier.name,
    CurrencyCode: po.total.currency,
    Ordered: Number(po.total.amount),
    lines: po.items.map((item, i) => ({
      LineNumber: i + 1,
      Description: item.description,
      Quantity: item.quantity,
      Price: Number(item.unit_price.amount),
    })),
  });
  sap.deliveries.push({
    DeliveryDocument: nomination.nomination_ref,
    DeliveryDate: `/Date(${Date.parse(`${nomination.gas_day}T00:00:00Z`)})/`,
    to_DeliveryDocumentItem: { results: [] },
  });
  oracle.receipts.push({
    ShipmentNumber: nomination.nomination_ref,
    ExpectedReceiptDate: nomination.gas_day,
    lines: [],
  });
  return { order: po.order_number, delivery: nomination.nomination_ref };
}

/** The secrets of an earlier start, so its sealed data stays readable; new ones the first time. */
function secrets(envFile: string): Record<string, string> {
  const earlier = existsSync(envFile) ? readFileSync(envFile, 'utf8') : '';
  const kept = (name: string) => new RegExp(`^${name}='([^']+)'$`, 'm').exec(earlier)?.[1];
  return {
    JWT_SECRET: kept('JWT_SECRET') ?? randomBytes(48).toString('base64'),
    ADMIN_JWT_SECRET: kept('ADMIN_JWT_SECRET') ?? randomBytes(48).toString('base64'),
    MASTER_KEY: kept('MASTER_KEY') ?? randomBytes(32).toString('base64'),
  };
}

function logRequests(name: string, erp: ErpStandIn): void {
  erp.onRequest = (req, status) => {
    if (req.method === 'GET' && req.headers['x-csrf-token'] === 'Fetch') return;
    process.stdout.write(`${name}: ${req.method} ${req.path} -> ${status}\n`);
  };
}

async function main(): Promise<void> {
  const ca = localCa(dir);
  const tls = ca.server;
  const smtp = await startSmtpSink({ port: port(1025) });
  const mailPage = await startMailPage(smtp.mails, port(8025));
  const stripe = await new StripeStandIn({ ...STAND_IN_CREDENTIALS.stripe, prices: STRIPE_PRICE_AMOUNTS }).start({
    port: port(4403),
    tls,
  });
  stripe.webhookUrl = `${serviceUrl}/v1/billing/webhook`;
  const idp = await TestIdp.start(generateIdpKey('SDF stand-in IdP'), { port: port(4400), tls });
  const sap = await new SapStandIn(STAND_IN_CREDENTIALS.sap).start(port(4401), tls);
  const { auth_type: _oauth, ...oracleClient } = STAND_IN_CREDENTIALS.oracle;
  const oracle = await new OracleStandIn({ auth_type: 'oauth2', ...oracleClient }).start(port(4402), tls);
  const refs = seed(sap, oracle);
  logRequests('sap', sap);
  logRequests('oracle', oracle);

  const envFile = join(dir, 'service.env');
  const settings: Record<string, string> = {
    DEPLOYMENT_MODE: 'managed',
    DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/sdf_managed',
    REDIS_PREFIX: 'sdf_managed',
    STORAGE_LOCAL_DIR: 'data/managed/storage',
    PUBLIC_BASE_URL: serviceUrl,
    NODE_EXTRA_CA_CERTS: ca.caFile,
    SMTP_URL: smtp.url,
    // Not the service's: the mail page, where the README's managed walkthrough reads the mail.
    MAIL_URL: mailPage.url,
    STRIPE_API_BASE: stripe.base,
    STRIPE_SECRET_KEY: STAND_IN_CREDENTIALS.stripe.secretKey,
    STRIPE_WEBHOOK_SECRET: STAND_IN_CREDENTIALS.stripe.webhookSecret,
    STRIPE_PRICE_DEVELOPER: STRIPE_PRICES.developer,
    STRIPE_PRICE_TEAM: STRIPE_PRICES.team,
    STRIPE_PRICE_BUSINESS: STRIPE_PRICES.business,
    STRIPE_RETURN_URL: `${serviceUrl}/app/billing`,
    ...secrets(envFile),
  };
  writeFileSync(
    envFile,
    '# Written by npm run dev:stand-ins: the managed service beside the stand-ins.\n' +
      Object.entries(settings)
        .map(([k, v]) => `${k}='${v}'`)
        .join('\n') +
      '\n',
    { mode: 0o600 },
  );
  const connector = (erp: 'SAP' | 'ORACLE', standIn: ErpStandIn) =>
    JSON.stringify({
      erp_type: erp,
      name: `${erp === 'SAP' ? 'SAP S/4HANA' : 'Oracle Fusion'} stand-in`,
      base_url: standIn.url,
      ...(erp === 'SAP'
        ? { auth_type: 'basic', credentials: { username: 'sdf', password: STAND_IN_CREDENTIALS.sap.password } }
        : { auth_type: 'oauth2', credentials: { ...oracleClient, token_url: standIn.tokenUrl } }),
    });
  const shown = Object.entries(settings).filter(([k]) => !['JWT_SECRET', 'ADMIN_JWT_SECRET', 'MASTER_KEY'].includes(k));
  const lines = [
    `# Stand-ins on loopback. The service's settings are in ${envFile} (with its secrets):`,
    ...shown.map(([k, v]) => `${k}=${v}`),
    '# Start the service with them in another terminal, from the project folder:',
    `#   set -a; . ${envFile}; set +a; npm start`,
    '#',
    `# mail:   ${mailPage.url}/ (the mails the service sent; Mailpit's API at MAIL_URL/api/v1/...)`,
    `# stripe: ${stripe.base}/c/pay/<session> pays; events go to ${stripe.webhookUrl}`,
    `# saml:   metadata ${idp.metadataUrl}, sign-in form ${idp.ssoUrl}`,
    `# sap:    ${sap.url} holds purchase order ${refs.order} and delivery ${refs.delivery}`,
    `# oracle: ${oracle.url} holds the same`,
    `# Connector settings (POST /connectors/configure), after the operator allows 127.0.0.1/32 for the tenant:`,
    `#   ${connector('SAP', sap)}`,
    `#   ${connector('ORACLE', oracle)}`,
    `# The CA is kept in ${dir}; trust ca.pem there (NODE_EXTRA_CA_CERTS, curl --cacert, a browser).`,
    'stand-ins ready',
  ];
  process.stdout.write(lines.join('\n') + '\n');

  const stop = () => {
    void Promise.allSettled([smtp.close(), stripe.stop(), idp.close(), sap.stop(), oracle.stop()]).then(() => {
      mailPage.close();
      process.exit(0);
    });
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((err: unknown) => {
  const { code, port: taken } = err as NodeJS.ErrnoException & { port?: number };
  if (code === 'EADDRINUSE' && !anyPorts) {
    const what = taken !== undefined && FIXED_PORTS[taken] ? ` (${FIXED_PORTS[taken]})` : '';
    process.stderr.write(
      `stand-ins: port ${taken ?? '?'}${what} is taken; run with --any-ports to pick free ports: ` +
        'npm run dev:stand-ins -- --any-ports\n',
    );
  } else {
    process.stderr.write(`stand-ins: ${(err as Error).message}\n`);
  }
  process.exit(1);
});
