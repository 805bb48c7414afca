import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './helpers/app.js';
import { countRows, userToken } from './helpers/billing.js';
import { StripeStandIn, type StripeEvent } from './helpers/stripe-stand-in.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';

const SECRET_KEY = 'sk_test_standin_0123456789';
const WEBHOOK_SECRET = 'whsec_standin_0123456789abcdef';
const PRICES = { developer: 'price_developer_m', team: 'price_team_m', business: 'price_business_m' };

describe('Stripe billing (M3) against a Stripe stand-in', () => {
  let stripe: StripeStandIn;
  let a: TestApp;
  let b: TestApp;
  let tenant: TenantFixture;
  let other: TenantFixture;
  let subscriptionId: string;

  beforeAll(async () => {
    stripe = await new StripeStandIn({ secretKey: SECRET_KEY, webhookSecret: WEBHOOK_SECRET }).start();
    const env = {
      DEPLOYMENT_MODE: 'managed',
      // Free allows 20 requests a minute; a one-second window keeps this file's requests within it.
      RATE_LIMIT_WINDOW_SECONDS: '1',
      STRIPE_SECRET_KEY: SECRET_KEY,
      STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
      STRIPE_PRICE_DEVELOPER: PRICES.developer,
      STRIPE_PRICE_TEAM: PRICES.team,
      STRIPE_PRICE_BUSINESS: PRICES.business,
      STRIPE_RETURN_URL: 'https://portal.example.com/billing',
      STRIPE_API_BASE: stripe.base,
    };
    a = await startApp({ env });
    b = await startApp({ env, shareWith: a });
    // Stripe posts its webhooks over HTTP, so instance b listens on loopback.
    await b.app.listen(0, '127.0.0.1');
    stripe.webhookUrl = `http://127.0.0.1:${(b.app.getHttpServer().address() as AddressInfo).port}/v1/billing/webhook`;
    tenant = await createTenant(a);
    other = await createTenant(a);
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await stripe?.stop();
  });

  const owner = (t: TenantFixture) => `Bearer ${userToken(a, t.id, 'owner')}`;
  // A refusal names its code and headers, so a 429 says which limit it came from.
  const ok = async (res: Promise<{ status: number; body: unknown; headers: Record<string, string> }>) => {
    const r = await res;
    expect(r.status, JSON.stringify({ body: r.body, headers: r.headers })).toBe(200);
    return r;
  };
  const planOf = async (via: TestApp, t: TenantFixture) =>
    (await ok(via.http().get('/v1/billing/plan').set('X-API-Key', t.apiKey))).body as Record<string, unknown>;
  const limitSeenBy = async (via: TestApp, t: TenantFixture) =>
    (await ok(via.http().get('/tenant').set('X-API-Key', t.apiKey))).headers['x-ratelimit-limit'];
  const planChanges = (t: TenantFixture) =>
    a.ds.query(
      `SELECT actor, metadata->>'from' AS "from", metadata->>'to' AS "to", metadata->>'source' AS source
         FROM audit_log WHERE tenant_id = $1 AND action = 'billing.plan_change' ORDER BY created_at, id`,
      [t.id],
    ) as Promise<{ actor: string; from: string; to: string; source: string }[]>;
  const eventsStored = () => countRows(a, `SELECT count(*) AS n FROM billing_events`, []);

  async function checkout(t: TenantFixture, plan: string): Promise<string> {
    const res = await ok(a.http().post('/v1/billing/checkout').set('Authorization', owner(t)).send({ plan }));
    const url = (res.body as { url: string }).url;
    expect(url.startsWith(`${stripe.base}/c/pay/`)).toBe(true);
    return url.slice(url.lastIndexOf('/') + 1);
  }

  it('checkout and portal are for owners and admins: a member, a role-less token and an API key get 403', async () => {
    const member = `Bearer ${userToken(a, tenant.id, 'member')}`;
    for (const path of ['/v1/billing/checkout', '/v1/billing/portal']) {
      for (const auth of [
        { Authorization: member },
        { Authorization: `Bearer ${a.tenantToken(tenant.id)}` },
        { 'X-API-Key': tenant.apiKey },
      ]) {
        const res = await a.http().post(path).set(auth).send({ plan: 'team' });
        expect(res.status, path).toBe(403);
        expect(res.body.error.code).toBe('FORBIDDEN');
      }
    }
    expect(stripe.requests).toEqual([]);
    const admin = await a
      .http()
      .post('/v1/billing/checkout')
      .set('Authorization', `Bearer ${userToken(a, tenant.id, 'admin')}`)
      .send({ plan: 'enterprise' });
    expect(admin.status).toBe(400);
    // No customer yet: nothing to manage in the portal.
    const portal = await a.http().post('/v1/billing/portal').set('Authorization', owner(tenant));
    expect(portal.status).toBe(409);
  });

  it('checkout -> completion webhook: plan and rpm change on both instances, audited; one customer per tenant', async () => {
    const first = await checkout(tenant, 'developer');
    const session = await checkout(tenant, 'team');
    expect(first).not.toBe(session);
    const customers = [...stripe.customers.values()].filter(
      (c) => (c.metadata as Record<string, string>).tenant_id === tenant.id,
    );
    expect(customers).toHaveLength(1);
    expect(stripe.sessions.get(session)).toMatchObject({
      mode: 'subscription',
      customer: customers[0].id,
      client_reference_id: tenant.id,
      line_items: [{ price: PRICES.team, quantity: '1' }],
    });
    expect(await limitSeenBy(a, tenant)).toBe('20');
    expect(await limitSeenBy(b, tenant)).toBe('20');

    const { subscription } = await stripe.completeCheckout(session);
    subscriptionId = subscription.id as string;
    const item = (subscription.items as { data: { current_period_end: number }[] }).data[0];
    for (const via of [a, b]) {
      expect(await planOf(via, tenant)).toMatchObject({
        plan: 'team',
        rpm: 300,
        subscription_status: 'active',
        current_period_end: new Date(item.current_period_end * 1000).toISOString(),
        cancel_at_period_end: false,
      });
      expect(await limitSeenBy(via, tenant)).toBe('300');
    }
    expect(await planChanges(tenant)).toEqual([{ actor: 'stripe', from: 'free', to: 'team', source: 'stripe' }]);
    // Already subscribed: changes go through the portal.
    expect(
      (await a.http().post('/v1/billing/checkout').set('Authorization', owner(tenant)).send({ plan: 'business' }))
        .status,
    ).toBe(409);
    const portal = await a.http().post('/v1/billing/portal').set('Authorization', owner(tenant)).expect(200);
    expect(portal.body.url).toMatch(new RegExp(`^${stripe.base}/p/session/`));
    // The billing period is now the subscription's.
    const usage = await a.http().get('/v1/billing/usage').set('X-API-Key', tenant.apiKey).expect(200);
    expect(usage.body.period.end).toBe(new Date(item.current_period_end * 1000).toISOString());
  });

  it('a forged, unsigned, stale or altered webhook is 400 and changes nothing', async () => {
    const stored = await eventsStored();
    const event = stripe.updateSubscription(subscriptionId, { price: PRICES.business });
    const cases: [string, Parameters<StripeStandIn['deliver']>[1]][] = [
      ['forged', { secret: 'whsec_somebody_else_entirely' }],
      ['unsigned', { header: null }],
      ['stale', { timestamp: Math.floor(Date.now() / 1000) - 600 }],
      ['garbage', { header: 't=1,v1=deadbeef' }],
    ];
    for (const [name, signature] of cases) {
      const res = await stripe.deliver(event, signature);
      expect(res.status, name).toBe(400);
      expect((res.body as { error: { code: string } }).error.code).toBe('VALIDATION_ERROR');
    }
    // Signed over other bytes than the ones sent.
    const altered = await fetch(stripe.webhookUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ ...event, type: 'customer.subscription.deleted' }),
    });
    expect(altered.status).toBe(400);
    expect(await eventsStored()).toBe(stored);
    expect(await planOf(b, tenant)).toMatchObject({ plan: 'team' });
    stripe.updateSubscription(subscriptionId, { price: PRICES.team });
  });

  it('a failed payment makes the subscription past_due; the plan stays until it ends', async () => {
    expect((await stripe.deliver(stripe.paymentFailed(subscriptionId))).status).toBe(200);
    expect(await planOf(a, tenant)).toMatchObject({ plan: 'team', subscription_status: 'past_due' });
    expect((await stripe.deliver(stripe.updateSubscription(subscriptionId, { status: 'active' }))).status).toBe(200);
    expect(await planOf(a, tenant)).toMatchObject({ plan: 'team', subscription_status: 'active' });
  });

  it('an older event after a newer one changes nothing; a replayed event changes nothing', async () => {
    const newer = stripe.updateSubscription(subscriptionId, { price: PRICES.business });
    const older: StripeEvent = {
      ...stripe.updateSubscription(subscriptionId, { price: PRICES.developer }),
      created: newer.created - 100,
    };
    expect((await stripe.deliver(newer)).status).toBe(200);
    expect(await planOf(a, tenant)).toMatchObject({ plan: 'business', rpm: 1000 });
    expect((await stripe.deliver(older)).status).toBe(200);
    expect(await planOf(a, tenant)).toMatchObject({ plan: 'business', rpm: 1000 });

    // An operator moves the tenant; the same Stripe event delivered again must not undo that.
    expect(
      (
        await a
          .http()
          .patch(`/admin/tenants/${tenant.id}`)
          .set('Authorization', `Bearer ${a.adminToken()}`)
          .send({ plan: 'developer' })
      ).status,
    ).toBe(200);
    const stored = await eventsStored();
    expect((await stripe.deliver(newer)).status).toBe(200);
    expect(await eventsStored()).toBe(stored);
    expect(await planOf(b, tenant)).toMatchObject({ plan: 'developer', rpm: 60 });
    expect((await stripe.deliver(stripe.updateSubscription(subscriptionId, { price: PRICES.team }))).status).toBe(200);
    expect(await planOf(b, tenant)).toMatchObject({ plan: 'team' });
  });

  it("another tenant's events never touch this tenant", async () => {
    const { subscription } = await stripe.completeCheckout(await checkout(other, 'developer'));
    const before = await planOf(a, tenant);
    expect(
      (await stripe.deliver(stripe.updateSubscription(subscription.id as string, { price: PRICES.business }))).status,
    ).toBe(200);
    expect(await planOf(a, other)).toMatchObject({ plan: 'business' });
    expect(await planOf(a, tenant)).toEqual(before);

    // A Checkout Session of the other tenant's customer that names this tenant: neither changes.
    const otherCustomer = subscription.customer as string;
    const crossed = stripe.event('checkout.session.completed', {
      id: 'cs_test_crossed',
      object: 'checkout.session',
      mode: 'subscription',
      status: 'complete',
      payment_status: 'paid',
      customer: otherCustomer,
      client_reference_id: tenant.id,
      subscription: 'sub_crossed',
      metadata: { tenant_id: tenant.id, plan: 'developer' },
    });
    expect((await stripe.deliver(crossed)).status).toBe(200);
    expect(await planOf(a, tenant)).toEqual(before);
    expect(await planOf(a, other)).toMatchObject({ plan: 'business' });
    // A customer nobody here knows.
    const stranger = stripe.event('customer.subscription.deleted', {
      id: 'sub_x',
      object: 'subscription',
      customer: 'cus_unknown',
      status: 'canceled',
    });
    expect((await stripe.deliver(stranger)).status).toBe(200);
    expect(await planOf(a, tenant)).toEqual(before);
    expect(await planOf(a, other)).toMatchObject({ plan: 'business' });
  });

  it('cancellation: the plan holds until the period ends, then Free with its rpm on both instances', async () => {
    expect(
      (await stripe.deliver(stripe.updateSubscription(subscriptionId, { cancel_at_period_end: true }))).status,
    ).toBe(200);
    expect(await planOf(a, tenant)).toMatchObject({
      plan: 'team',
      cancel_at_period_end: true,
      subscription_status: 'active',
    });
    expect((await stripe.deliver(stripe.endSubscription(subscriptionId))).status).toBe(200);
    // This one-second window already counted this file's earlier requests under Team's 300; Free's 20
    // applies from the next window on, so the requests below start in a fresh one.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    for (const via of [a, b]) {
      expect(await planOf(via, tenant)).toMatchObject({
        plan: 'free',
        rpm: 20,
        subscription_status: 'canceled',
        cancel_at_period_end: false,
      });
      expect(await limitSeenBy(via, tenant)).toBe('20');
    }
    expect((await planChanges(tenant)).map((c) => `${c.source}:${c.from}->${c.to}`)).toEqual([
      'stripe:free->team',
      'stripe:team->business',
      'admin:business->developer',
      'stripe:developer->team',
      'stripe:team->free',
    ]);
    // Subscribing again is possible once the subscription has ended.
    await checkout(tenant, 'developer');
  });
});
