/**
 * What a JWT costs the service per request: signing and checking an HS256 tenant token with the
 * service's own functions (the secret as a key object), beside the baseline of jsonwebtoken given the
 * secret as a string, as the service called it before (jsonwebtoken then tries to read the string as a
 * PEM key on every call and falls back once that throws). Both sides take turns, round by round, on the
 * same claims; the figures are per token, in microseconds.
 *
 *   npm run bench:tokens [rounds] [tokens per round]
 */
import { randomBytes } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { signTenantToken, verifyTenantToken } from '../src/auth/tokens.js';
import { median, percentile, run } from './harness.js';

const ROUNDS = Number(process.argv[2] ?? 7);
const PER_ROUND = Number(process.argv[3] ?? 2000);
const TTL = 3600;

interface Side {
  name: string;
  sign: (i: number) => string;
  verify: (token: string) => boolean;
}

const secret = randomBytes(32).toString('hex');
const claims = (i: number) => ({ tenant_id: `tenant-${i % 50}`, sub: `user-${i}` });

const sides: Side[] = [
  {
    name: 'baseline: jsonwebtoken with the secret string',
    sign: (i) => {
      const { tenant_id, sub } = claims(i);
      return jwt.sign({ tenant_id }, secret, { algorithm: 'HS256', subject: sub, expiresIn: TTL });
    },
    verify: (token) => typeof jwt.verify(token, secret, { algorithms: ['HS256'] }) === 'object',
  },
  {
    name: 'service: signTenantToken / verifyTenantToken',
    sign: (i) => signTenantToken(secret, claims(i), TTL),
    verify: (token) => typeof verifyTenantToken(token, secret, TTL) === 'object',
  },
];

/** One round of one side: per-token microseconds for signing and for checking. */
function round(side: Side): { sign: number[]; verify: number[] } {
  const sign: number[] = [];
  const verify: number[] = [];
  for (let i = 0; i < PER_ROUND; i++) {
    const a = process.hrtime.bigint();
    const token = side.sign(i);
    const b = process.hrtime.bigint();
    if (!side.verify(token)) throw new Error(`${side.name}: a token it signed did not pass`);
    const c = process.hrtime.bigint();
    sign.push(Number(b - a) / 1000);
    verify.push(Number(c - b) / 1000);
  }
  return { sign, verify };
}

run(async () => {
  // Warm both sides up before measuring.
  for (const side of sides) round(side);
  const results = sides.map(() => ({ sign: [] as number[], verify: [] as number[], roundMedians: [] as number[] }));
  for (let r = 0; r < ROUNDS; r++) {
    sides.forEach((side, i) => {
      const { sign, verify } = round(side);
      results[i]!.sign.push(...sign);
      results[i]!.verify.push(...verify);
      results[i]!.roundMedians.push(median(sign.map((s, k) => s + verify[k]!)));
    });
  }
  console.log(`${ROUNDS} rounds of ${PER_ROUND} tokens per side, in turns (figures per token, µs)`);
  const line = (label: string, values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    return `${label.padEnd(8)} p50 ${percentile(sorted, 50).toFixed(1).padStart(7)}  p99 ${percentile(sorted, 99)
      .toFixed(1)
      .padStart(7)}`;
  };
  sides.forEach((side, i) => {
    console.log(side.name);
    console.log(`  ${line('sign', results[i]!.sign)}`);
    console.log(`  ${line('verify', results[i]!.verify)}`);
  });
  const [base, own] = results as [(typeof results)[0], (typeof results)[0]];
  const ratios = base.roundMedians.map((b, r) => b / own.roundMedians[r]!);
  const both = (x: (typeof results)[0]) => median(x.sign.map((s, k) => s + x.verify[k]!));
  console.log(
    `sign + verify, median per token: baseline ${both(base).toFixed(1)} µs, service ${both(own).toFixed(1)} µs: ` +
      `${(both(base) / both(own)).toFixed(1)}x faster (round by round ${Math.min(...ratios).toFixed(1)}x to ${Math.max(...ratios).toFixed(1)}x)`,
  );
});
