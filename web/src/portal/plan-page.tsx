import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useSearch } from 'wouter';
import { api, unwrap, type Schemas } from '../api/client.js';
import { ProblemNotice } from '../documents/status.js';
import { formatBytes, formatDateTime } from '../format.js';
import { useProfile } from './team-page.js';

type Offer = Schemas['PlanOfferDto'];

const count = (n: number) => new Intl.NumberFormat().format(n);
const limit = (n: number | null, format: (n: number) => string) => (n === null ? 'No limit' : format(n));

/** How long the page waits for Stripe's word after a successful checkout before it says so. */
const CONFIRM_WAIT_MS = 60_000;

/**
 * The plans side by side, the current one marked; an upgrade goes through Stripe Checkout, a running
 * subscription is managed in Stripe's customer portal. The plan changes when Stripe tells the service,
 * so after a checkout the page watches for it.
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
    if (!current || offer.id === current.plan) return <span className="badge badge-valid">Your plan</span>;
    if (!manages) return null;
    if (offer.custom) return <span className="muted">Ask us</span>;
    if (!offer.self_service) return null;
    if (subscribed) {
      return (
        <button type="button" className="secondary" onClick={() => portal.mutate()} disabled={portal.isPending}>
          Change in billing<span className="visually-hidden"> to {offer.name}</span>
        </button>
      );
    }
    return (
      <button
        type="button"
        onClick={() => checkout.mutate(offer.id as Schemas['CheckoutDto']['plan'])}
        disabled={checkout.isPending}
      >
        {rank(offer.id) > rank(current.plan) ? 'Upgrade' : 'Switch'} to {offer.name}
      </button>
    );
  };

  return (
    <section>
      <h1 tabIndex={-1}>Plan</h1>
      {returned === 'success' && (
        <p className="notice ok" role="status" data-testid="checkout-result">
          {subscribed
            ? `Thank you: you are on ${current?.name ?? 'the new plan'} now.`
            : 'Payment received. Your plan changes as soon as Stripe confirms it, usually within seconds.'}
        </p>
      )}
      {returned === 'cancel' && (
        <p className="notice" role="status" data-testid="checkout-result">
          Checkout cancelled: nothing was charged and your plan is unchanged.
        </p>
      )}
      <ProblemNotice error={plan.error ?? plans.error ?? checkout.error ?? portal.error} />
      {current && (
        <div className="panel-box" data-testid="current-plan">
          <p className="lead">
            You are on <strong>{current.name}</strong>
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
        <table data-testid="plans">
          <caption className="visually-hidden">Plans and their limits per billing period</caption>
          <thead>
            <tr>
              <th scope="col">Plan</th>
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
              <tr key={offer.id} data-testid="plan-row" data-plan={offer.id} aria-current={offer.id === current?.plan}>
                <th scope="row">{offer.name}</th>
                <td className="num">{offer.custom ? 'Agreed' : limit(offer.limits.documents, count)}</td>
                <td className="num">{offer.custom ? 'Agreed' : limit(offer.limits.api_calls, count)}</td>
                <td className="num">{offer.custom ? 'Agreed' : limit(offer.limits.storage_bytes, formatBytes)}</td>
                <td className="num">{offer.rpm === null ? 'Agreed' : count(offer.rpm)}</td>
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
