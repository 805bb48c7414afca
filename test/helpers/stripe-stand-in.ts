import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TlsIdentity } from './tls.js';

/**
 * A Stripe stand-in on loopback for the parts of Stripe's API the service calls: form-encoded requests
 * with a bearer secret key, Stripe's JSON objects and error shape (customers, Checkout Sessions,
 * customer portal sessions), and webhook events signed as Stripe signs them
 * (`Stripe-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<body>">`).
 */

export interface StandInOptions {
  secretKey: string;
  webhookSecret: string;
  /** Seconds since the epoch for subscription periods and event `created` (the tests' moved clock). */
  now?: () => number;
  /** Recurring prices `GET /v1/prices/{id}` knows, by id. */
  prices?: Record<string, StandInPrice>;
}

/** A recurring price: `unit_amount` in the currency's smallest unit, `currency` lower case as Stripe writes it. */
export interface StandInPrice {
  unit_amount: number | null;
  currency: string;
  interval: 'day' | 'week' | 'month' | 'year';
  interval_count?: number;
}

type Obj = Record<string, unknown>;

export interface StripeEvent {
  id: string;
  object: 'event';
  api_version: string;
  created: number;
  livemode: false;
  pending_webhooks: number;
  request: { id: string | null; idempotency_key: string | null };
  type: string;
  data: { object: Obj };
}

const id = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;

/** Decodes Stripe's form encoding (`a[b][0][c]=v`) into nested objects and arrays. */
export function parseForm(body: string): Obj {
  const out: Obj = {};
  for (const [rawKey, value] of new URLSearchParams(body)) {
    const path = rawKey.replace(/\]/g, '').split('[');
    let node: Obj = out;
    path.forEach((segment, i) => {
      const last = i === path.length - 1;
      if (last) {
        node[segment] = value;
        return;
      }
      const nextIsIndex = /^\d+$/.test(path[i + 1]);
      node[segment] ??= nextIsIndex ? [] : {};
      node = node[segment] as Obj;
    });
  }
  return out;
}

export function signPayload(payload: string, secret: string, timestamp = Math.floor(Date.now() / 1000)): string {
  const v1 = createHmac('sha256', secret).update(`${timestamp}.${payload}`).digest('hex');
  return `t=${timestamp},v1=${v1}`;
}

export class StripeStandIn {
  readonly customers = new Map<string, Obj>();
  readonly sessions = new Map<string, Obj>();
  readonly subscriptions = new Map<string, Obj>();
  readonly portalSessions = new Map<string, Obj>();
  readonly requests: { method: string; path: string; form: Obj; idempotencyKey?: string }[] = [];
  private readonly idempotent = new Map<string, Obj>();
  private server!: Server;
  private lastCreated = 0;
  /** Where webhooks go (the app's POST /v1/billing/webhook). */
  webhookUrl = '';

  constructor(private readonly options: StandInOptions) {}

  private secure = false;

  get base(): string {
    return `${this.secure ? 'https' : 'http'}://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  private now(): number {
    return this.options.now ? this.options.now() : Math.floor(Date.now() / 1000);
  }

  /** Listens on loopback (any free port unless told); with `tls`, over https with that certificate. */
  async start(options: { port?: number; tls?: TlsIdentity } = {}): Promise<this> {
    const handler = (req: IncomingMessage, res: ServerResponse) => {
      void this.route(req, res);
    };
    this.secure = options.tls !== undefined;
    this.server = options.tls ? createHttpsServer(options.tls, handler) : createServer(handler);
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(options.port ?? 0, '127.0.0.1', resolve);
    });
    return this;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const form = parseForm(Buffer.concat(chunks).toString('utf8'));
    const send = (status: number, body: Obj) => {
      res.writeHead(status, { 'Content-Type': 'application/json', 'Request-Id': id('req') });
      res.end(JSON.stringify(body));
    };
    // The pages a customer's browser opens (no secret key): Checkout's payment page and the portal.
    const page = /^\/(c\/pay|p\/session)\/([\w-]+)$/.exec((req.url ?? '').split('?')[0]);
    if (page) return this.page(req.method ?? 'GET', page[1], page[2], res);
    const error = (status: number, type: string, message: string, extra: Obj = {}) =>
      send(status, { error: { type, message, ...extra } });
    if (req.headers.authorization !== `Bearer ${this.options.secretKey}`) {
      return error(401, 'invalid_request_error', 'Invalid API Key provided');
    }
    const path = (req.url ?? '').split('?')[0];
    const key = req.headers['idempotency-key'] as string | undefined;
    this.requests.push({ method: req.method ?? '', path, form, idempotencyKey: key });
    if (key && this.idempotent.has(key)) return send(200, this.idempotent.get(key)!);
    const remember = (body: Obj) => {
      if (key) this.idempotent.set(key, body);
      send(200, body);
    };
    const priceId = /^\/v1\/prices\/([^/]+)$/.exec(path)?.[1];
    if (req.method === 'GET' && priceId !== undefined) {
      const price = this.priceObject(decodeURIComponent(priceId));
      if (!price) {
        return error(404, 'invalid_request_error', `No such price: '${decodeURIComponent(priceId)}'`, {
          code: 'resource_missing',
          param: 'id',
        });
      }
      return send(200, price);
    }
    if (req.method === 'POST' && path === '/v1/customers') {
      const customer = { id: id('cus'), object: 'customer', created: this.now(), livemode: false, ...form };
      this.customers.set(customer.id, customer);
      return remember(customer);
    }
    if (req.method === 'POST' && path === '/v1/checkout/sessions') {
      if (!this.customers.has(form.customer as string)) {
        return error(400, 'invalid_request_error', `No such customer: '${String(form.customer)}'`, {
          code: 'resource_missing',
          param: 'customer',
        });
      }
      const sid = id('cs_test');
      const session = {
        id: sid,
        object: 'checkout.session',
        created: this.now(),
        livemode: false,
        status: 'open',
        payment_status: 'unpaid',
        subscription: null,
        url: `${this.base}/c/pay/${sid}`,
        ...form,
      };
      this.sessions.set(sid, session);
      return remember(session);
    }
    if (req.method === 'POST' && path === '/v1/billing_portal/sessions') {
      if (!this.customers.has(form.customer as string)) {
        return error(400, 'invalid_request_error', `No such customer: '${String(form.customer)}'`, {
          code: 'resource_missing',
          param: 'customer',
        });
      }
      const bps = id('bps');
      const portal = {
        id: bps,
        object: 'billing_portal.session',
        created: this.now(),
        livemode: false,
        url: `${this.base}/p/session/${bps}`,
        ...form,
      };
      this.portalSessions.set(bps, portal);
      return remember(portal);
    }
    return error(404, 'invalid_request_error', `Unrecognized request URL (${req.method} ${path})`);
  }

  /**
   * Checkout's payment page: GET shows the plan's price with a button, POST pays (the events of a
   * completed checkout go to the webhook URL, signed) and sends the browser to the session's
   * success_url. The portal's page leads back to its return_url.
   */
  private async page(method: string, kind: string, pageId: string, res: ServerResponse): Promise<void> {
    const html = (status: number, title: string, body: string) => {
      res.writeHead(status, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end(
        `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>` +
          `<body><main><h1>${escapeHtml(title)}</h1>${body}</main></body></html>`,
      );
    };
    if (kind === 'p/session') {
      const back = this.portalSessions.get(pageId)?.return_url;
      return html(
        200,
        'Customer portal (stand-in)',
        '<p>Nothing to manage here: plan changes come from Checkout.</p>' +
          (typeof back === 'string' ? `<p><a href="${escapeHtml(back)}">Back to the service</a></p>` : ''),
      );
    }
    const session = this.sessions.get(pageId);
    if (!session) return html(404, 'No such checkout session', '');
    const price = String((session.line_items as { price?: string }[] | undefined)?.[0]?.price ?? '');
    if (method === 'GET') {
      return html(
        200,
        'Checkout (stand-in)',
        `<p>Subscribe to <strong>${escapeHtml(price)}</strong> as ${escapeHtml(String(session.customer))}.</p>` +
          (session.status === 'complete'
            ? '<p>Paid.</p>'
            : `<form method="post"><button type="submit">Pay with a test card</button></form>` +
              // Checkout's back link: to the session's cancel_url, nothing paid.
              (typeof session.cancel_url === 'string'
                ? `<p><a href="${escapeHtml(session.cancel_url)}">Cancel and go back</a></p>`
                : '')),
      );
    }
    if (session.status !== 'complete') {
      try {
        await this.completeCheckout(pageId);
      } catch (err) {
        return html(502, 'The webhook was refused', `<p>${escapeHtml((err as Error).message)}</p>`);
      }
    }
    res.writeHead(303, { Location: String(session.success_url ?? '/') });
    res.end();
  }

  /** A Price object as Stripe answers it (`GET /v1/prices/{id}`), for the prices given at construction. */
  priceObject(priceId: string): Obj | null {
    const p = this.options.prices?.[priceId];
    if (!p) return null;
    return {
      id: priceId,
      object: 'price',
      active: true,
      billing_scheme: 'per_unit',
      created: 1_767_225_600,
      currency: p.currency.toLowerCase(),
      custom_unit_amount: null,
      livemode: false,
      lookup_key: null,
      metadata: {},
      nickname: null,
      product: `prod_${priceId}`,
      recurring: {
        interval: p.interval,
        interval_count: p.interval_count ?? 1,
        meter: null,
        trial_period_days: null,
        usage_type: 'licensed',
      },
      tax_behavior: 'unspecified',
      tiers_mode: null,
      transform_quantity: null,
      type: 'recurring',
      unit_amount: p.unit_amount,
      unit_amount_decimal: p.unit_amount === null ? null : String(p.unit_amount),
    };
  }

  /** An event as Stripe builds it; `created` strictly increases unless given. */
  event(type: string, object: Obj, created?: number): StripeEvent {
    const at = created ?? Math.max(this.now(), this.lastCreated + 1);
    this.lastCreated = Math.max(this.lastCreated, at);
    return {
      id: id('evt'),
      object: 'event',
      api_version: '2026-10-28.endive',
      created: at,
      livemode: false,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      type,
      data: { object: structuredClone(object) },
    };
  }

  /** Posts an event to the webhook URL, signed with the webhook secret unless `signature` says otherwise. */
  async deliver(
    event: StripeEvent,
    signature: { secret?: string; timestamp?: number; header?: string | null } = {},
  ): Promise<{ status: number; body: unknown }> {
    const payload = JSON.stringify(event, null, 2);
    const header =
      signature.header === undefined
        ? signPayload(payload, signature.secret ?? this.options.webhookSecret, signature.timestamp)
        : signature.header;
    const res = await fetch(this.webhookUrl, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json; charset=utf-8',
        'User-Agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
        ...(header === null ? {} : { 'Stripe-Signature': header }),
      },
      body: payload,
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as unknown) : null };
  }

  private subscriptionFor(session: Obj, periodDays = 30): Obj {
    const start = this.now();
    const items = session.line_items as { price: string; quantity: string }[];
    const sub = {
      id: id('sub'),
      object: 'subscription',
      created: start,
      customer: session.customer,
      status: 'active',
      cancel_at_period_end: false,
      canceled_at: null,
      livemode: false,
      metadata: (session.subscription_data as { metadata?: Obj } | undefined)?.metadata ?? {},
      items: {
        object: 'list',
        has_more: false,
        url: '/v1/subscription_items',
        data: [
          {
            id: id('si'),
            object: 'subscription_item',
            quantity: Number(items[0].quantity),
            price: { id: items[0].price, object: 'price', active: true, currency: 'eur', type: 'recurring' },
            current_period_start: start,
            current_period_end: start + periodDays * 86_400,
          },
        ],
      },
    };
    this.subscriptions.set(sub.id, sub);
    return sub;
  }

  /** The customer pays: checkout.session.completed and customer.subscription.created, in that order. */
  async completeCheckout(sessionId: string): Promise<{ subscription: Obj; events: StripeEvent[] }> {
    const session = this.sessions.get(sessionId);
    if (!session) throw new Error(`no session ${sessionId}`);
    const subscription = this.subscriptionFor(session);
    Object.assign(session, { status: 'complete', payment_status: 'paid', subscription: subscription.id });
    const events = [
      this.event('checkout.session.completed', session),
      this.event('customer.subscription.created', subscription),
    ];
    for (const e of events) {
      const res = await this.deliver(e);
      if (res.status !== 200) throw new Error(`webhook ${e.type} answered ${res.status}: ${JSON.stringify(res.body)}`);
    }
    return { subscription, events };
  }

  /** Changes a subscription (portal actions) and builds the customer.subscription.updated event. */
  updateSubscription(
    subId: string,
    change: { status?: string; cancel_at_period_end?: boolean; price?: string },
  ): StripeEvent {
    const sub = this.subscriptions.get(subId)!;
    if (change.status) sub.status = change.status;
    if (change.cancel_at_period_end !== undefined) sub.cancel_at_period_end = change.cancel_at_period_end;
    if (change.price) {
      const item = (sub.items as { data: { price: Obj }[] }).data[0];
      item.price = { ...item.price, id: change.price };
    }
    return this.event('customer.subscription.updated', sub);
  }

  /** The subscription ends (at period end after a cancellation): customer.subscription.deleted. */
  endSubscription(subId: string): StripeEvent {
    const sub = this.subscriptions.get(subId)!;
    Object.assign(sub, { status: 'canceled', ended_at: this.now() });
    return this.event('customer.subscription.deleted', sub);
  }

  /** A renewal charge failed: invoice.payment_failed for the subscription. */
  paymentFailed(subId: string): StripeEvent {
    const sub = this.subscriptions.get(subId)!;
    return this.event('invoice.payment_failed', {
      id: id('in'),
      object: 'invoice',
      customer: sub.customer,
      status: 'open',
      attempt_count: 1,
      parent: { type: 'subscription_details', subscription_details: { subscription: sub.id, metadata: {} } },
    });
  }
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
