import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useSearch } from 'wouter';
import { api, unwrap, type Schemas } from '../api/client.js';
import { ProblemNotice } from '../documents/status.js';
import { formatBytes, formatDateTime } from '../format.js';
import { NextStep } from './next-step.js';
import { formatPrice, planName } from './plan-name.js';
import { useProfile } from './team-page.js';

type Offer = Schemas['PlanOfferDto'];

const count = (n: number) => new Intl.NumberFormat().format(n);
const limit = (n: number | null, format: (n: number) => string) => (n === null ? 'No limit' : format(n));

/** How long the page waits for Stripe's word after a successful checkout before it says so. */
const CONFIRM_WAIT_MS = 60_000;

/** A plan's price cell: the amount and its period, "No charge" for Free, "Agreed with us" for the custom plan. */
function Price({ offer }: { offer: Offer }) {
  if (offer.custom) return <>Agreed with us</>;
  if (!offer.self_service) return <>No charge</>;
  if (!offer.price) return <span className="muted">Shown at checkout</span>;
  const { amount, period } = formatPrice(offer.price);
  return (
    <span>
      <strong className="price">{amount}</strong> <span className="muted">{period}</span>
    </span>
  );
}

/**
 * The plans side by side with their prices, the current one marked; an upgrade goes through Stripe
 * Checkout, a running subscription is managed in Stripe's customer portal. Stripe sends the customer
 * back here (at /billing or /plan) with `?checkout=success` or `cancel`; the plan changes when Stripe
 * tells the service, so after a payment the page watches for it.
 */
export function PlanPage() {
  const profile = useProfile();
  const returned = new URLSearchParams(useSearch()).get('checkout');
  const [since] = useState(() => Date.now());
  const plan = useQuery({
    queryKey: ['plan'],
    queryFn: () => unwrap(api.GET('/v1/billing/plan')),
    // Back from a paid checkout: ask again until the subscription shows (Stripe's webhook sets it).
    refetchInterval: (query) =>
      returned === 'success' && query.state.data?.subscription_status === 'none' && Date.now() - since < CONFIRM_WAIT_MS
        ? 2000
        : false,
  });
  const plans = useQuery({ queryKey: ['plans'], queryFn: () => unwrap(api.GET('/v1/billing/plans')) });
  const checkout = useMutation({
    mutationFn: (id: Schemas['CheckoutDto']['plan']) =>
      unwrap(api.POST('/v1/billing/checkout', { body: { plan: id } })),
    onSuccess: (answer) => answer && location.assign(answer.url),
  });
  const portal = useMutation({
    mutationFn: () => unwrap(api.POST('/v1/billing/portal')),
    onSuccess: (answer) => answer && location.assign(answer.url),
  });

  const current = plan.data;
  const manages = profile.data?.role === 'owner' || profile.data?.role === 'admin';
  const subscribed = current !== undefined && current.subscription_status !== 'none';
  const offers = plans.data?.data ?? [];
  const rank = (id: string) => offers.findIndex((o) => o.id === id);

  const action = (offer: Offer) => {
    // Until the organisation's plan is read, no offer is marked, nor offered.
    if (!current) return null;
    if (offer.id === current.plan) return <span className="badge badge-valid">Current plan</span>;
    if (!manages) return null;
    if (offer.custom) return <span className="muted">Ask us</span>;
    if (!offer.self_service) return null;
    if (subscribed) {
      return (
        <button type="button" className="secondary" onClick={() => portal.mutate()} disabled={portal.isPending}>
          Change in billing<span className="visually-hidden"> to {planName(offer.id)}</span>
        </button>
      );
    }
    return (
      <button
        type="button"
        onClick={() => checkout.mutate(offer.id as Schemas['CheckoutDto']['plan'])}
        disabled={checkout.isPending}
      >
        {rank(offer.id) > rank(current.plan) ? 'Upgrade' : 'Switch'} to {planName(offer.id)}
      </button>
    );
  };

  return (
    <section>
      <h1 tabIndex={-1}>Plan</h1>
      {returned === 'success' && (
        <>
          <p className="notice ok" role="status" data-testid="checkout-result" data-result="paid">
            {subscribed
              ? `Payment received. Thank you: you are on ${current ? planName(current.plan) : 'the new plan'} now.`
              : 'Payment received. Your plan changes as soon as Stripe confirms it, usually within seconds.'}
          </p>
          <NextStep href="/documents">Go to your documents</NextStep>
        </>
      )}
      {returned === 'cancel' && (
        <>
          <p className="notice" role="status" data-testid="checkout-result" data-result="cancelled">
            Checkout cancelled: nothing was charged and your plan is unchanged. You can choose a plan again below.
          </p>
          <NextStep href="/documents">Go to your documents</NextStep>
        </>
      )}
      <ProblemNotice error={plan.error ?? plans.error ?? checkout.error ?? portal.error} />
      {current && (
        <div className="panel-box" data-testid="current-plan">
          <p className="lead">
            You are on <strong>{planName(current.plan)}</strong>
            {subscribed ? ` (subscription ${current.subscription_status.replace(/_/g, ' ')})` : ''}.
          </p>
          <p>
            The current period ends on {formatDateTime(current.current_period_end)}
            {current.cancel_at_period_end ? '; the subscription ends then and the organisation returns to Free.' : '.'}
          </p>
          {subscribed && manages && (
            <button type="button" className="secondary" onClick={() => portal.mutate()} disabled={portal.isPending}>
              Manage billing: invoices, payment method, cancellation
            </button>
          )}
          {!manages && <p className="hint">The owner and admins change the plan.</p>}
        </div>
      )}
      <h2>Compare plans</h2>
      <div className="table-scroll">
        <table data-testid="plans" className="plan-table">
          <caption className="visually-hidden">Plans, their prices and their limits per billing period</caption>
          <thead>
            <tr>
              <th scope="col">Plan</th>
              <th scope="col">Price</th>
              <th scope="col" className="num">
                Documents a period
              </th>
              <th scope="col" className="num">
                API calls a period
              </th>
              <th scope="col" className="num">
                Storage
              </th>
              <th scope="col" className="num">
                Requests a minute
              </th>
              <th scope="col">
                <span className="visually-hidden">Action</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {offers.map((offer) => (
              <tr
                key={offer.id}
                data-testid="plan-row"
                data-plan={offer.id}
                aria-current={offer.id === current?.plan}
                className={offer.id === current?.plan ? 'current' : undefined}
              >
                <th scope="row">{planName(offer.id)}</th>
                <td data-testid="plan-price" data-label="Price">
                  <Price offer={offer} />
                </td>
                <td className="num" data-label="Documents a period">
                  {offer.custom ? 'Agreed' : limit(offer.limits.documents, count)}
                </td>
                <td className="num" data-label="API calls a period">
                  {offer.custom ? 'Agreed' : limit(offer.limits.api_calls, count)}
                </td>
                <td className="num" data-label="Storage">
                  {offer.custom ? 'Agreed' : limit(offer.limits.storage_bytes, formatBytes)}
                </td>
                <td className="num" data-label="Requests a minute">
                  {offer.rpm === null ? 'Agreed' : count(offer.rpm)}
                </td>
                <td>{action(offer)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <p className="hint">
        Payment happens on Stripe&apos;s pages; this service never sees card details. At a limit, requests are refused
        with a clear error until the next period or a larger plan; nothing stored is lost.
      </p>
    </section>
  );
}
