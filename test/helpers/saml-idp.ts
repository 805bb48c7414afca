import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inflateRawSync } from 'node:zlib';
import { DOMParser } from '@xmldom/xmldom';
import { SignedXml } from 'xml-crypto';
import type { TlsIdentity } from './tls.js';

/**
 * A small real SAML identity provider on loopback for the e2e tests: its own RSA key and self-signed
 * certificate (made by openssl), metadata over HTTP, an SSO endpoint that reads the AuthnRequest of
 * the HTTP-Redirect binding and shows a sign-in form (any address is accepted) whose answer posts a
 * signed response to the requesting service provider, and responses whose assertions it signs with
 * xml-crypto. Nothing here uses the code under test.
 */
export interface IdpKey {
  privateKey: string;
  certPem: string;
  /** Base64 DER, as metadata carries it. */
  certB64: string;
}

export function generateIdpKey(cn = 'test-idp'): IdpKey {
  const dir = mkdtempSync(join(tmpdir(), 'saml-idp-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-sha256',
        '-days',
        '2',
        '-subj',
        `/CN=${cn}`,
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    const certPem = readFileSync(join(dir, 'cert.pem'), 'utf8');
    return {
      privateKey: readFileSync(join(dir, 'key.pem'), 'utf8'),
      certPem,
      certB64: certPem.replace(/-----(BEGIN|END) CERTIFICATE-----|\s/g, ''),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface AuthnRequestSeen {
  id: string;
  acsUrl: string | null;
  issuer: string | null;
  relayState: string | null;
}

export interface ResponseOptions {
  /** null: an IdP-initiated response (no InResponseTo anywhere). */
  inResponseTo: string | null;
  destination: string;
  recipient?: string;
  audience: string;
  email: string;
  key?: IdpKey;
  /** false: the assertion goes out unsigned. */
  sign?: boolean;
  notBefore?: Date;
  notOnOrAfter?: Date;
  assertionId?: string;
  /** The assertion's Issuer; the IdP's entity id unless told otherwise. */
  issuer?: string;
}

const iso = (d: Date) => d.toISOString();
export const newId = () => `_${randomBytes(16).toString('hex')}`;

export class TestIdp {
  /** The certificates the metadata lists (the signing key is chosen per response). */
  metadataKeys: IdpKey[];
  /** Served as the metadata instead of the real one when set (a broken IdP). */
  metadataOverride: string | null = null;
  private constructor(
    private readonly server: http.Server | https.Server,
    readonly base: string,
    readonly key: IdpKey,
  ) {
    this.metadataKeys = [key];
  }

  /** Listens on loopback (any free port unless told); with `tls`, over https with that certificate. */
  static async start(
    key: IdpKey = generateIdpKey(),
    options: { port?: number; tls?: TlsIdentity } = {},
  ): Promise<TestIdp> {
    let idp: TestIdp | null = null;
    const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
      void idp!.handle(req, res);
    };
    const server = options.tls ? https.createServer(options.tls, handler) : http.createServer(handler);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, '127.0.0.1', resolve);
    });
    const { port } = server.address() as AddressInfo;
    idp = new TestIdp(server, `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`, key);
    return idp;
  }

  get entityId(): string {
    return `${this.base}/idp`;
  }
  get metadataUrl(): string {
    return `${this.base}/metadata`;
  }
  get ssoUrl(): string {
    return `${this.base}/sso`;
  }

  metadataXml(keys: IdpKey[] = this.metadataKeys): string {
    const kds = keys
      .map(
        (k) =>
          `<md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${k.certB64}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>`,
      )
      .join('');
    return `<?xml version="1.0" encoding="UTF-8"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="${this.entityId}">
<md:IDPSSODescriptor WantAuthnRequestsSigned="false" protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">${kds}
<md:NameIDFormat>urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress</md:NameIDFormat>
<md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${this.ssoUrl}"/>
</md:IDPSSODescriptor>
</md:EntityDescriptor>`;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.base);
    if (url.pathname === '/metadata') {
      res.writeHead(200, { 'Content-Type': 'application/samlmetadata+xml' });
      res.end(this.metadataOverride ?? this.metadataXml());
      return;
    }
    if (url.pathname === '/sso' && req.method === 'GET') {
      const seen = TestIdp.readAuthnRequest(url);
      if (!seen?.acsUrl || !seen.issuer) return page(res, 400, 'Not a SAML request', '');
      const hidden = (name: string, value: string | null) =>
        value === null ? '' : `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`;
      return page(
        res,
        200,
        'Sign in (stand-in identity provider)',
        `<p>Signing in to ${escapeHtml(seen.issuer)}. Any address is accepted.</p>` +
          `<form method="post" action="/sso">` +
          hidden('request_id', seen.id) +
          hidden('acs_url', seen.acsUrl) +
          hidden('audience', seen.issuer) +
          hidden('relay_state', seen.relayState) +
          `<label for="email">Email</label> <input id="email" name="email" type="email" required> ` +
          `<button type="submit">Sign in</button></form>`,
      );
    }
    if (url.pathname === '/sso' && req.method === 'POST') {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      const [email, acsUrl, audience] = ['email', 'acs_url', 'audience'].map((f) => form.get(f) ?? '');
      if (!email || !acsUrl || !audience) return page(res, 400, 'Email, acs_url and audience are required', '');
      const response = this.signedResponse({
        inResponseTo: form.get('request_id') || null,
        destination: acsUrl,
        audience,
        email,
      });
      const relayState = form.get('relay_state');
      // The HTTP-POST binding: the browser carries the response to the service provider.
      return page(
        res,
        200,
        'Signed in',
        `<form id="saml" method="post" action="${escapeHtml(acsUrl)}">` +
          `<input type="hidden" name="SAMLResponse" value="${escapeHtml(response)}">` +
          (relayState ? `<input type="hidden" name="RelayState" value="${escapeHtml(relayState)}">` : '') +
          `<button type="submit">Continue to the service</button></form>` +
          `<script>document.getElementById('saml').submit()</script>`,
      );
    }
    res.writeHead(404).end();
  }

  /** The AuthnRequest of an HTTP-Redirect URL (deflated, base64, in SAMLRequest). */
  static readAuthnRequest(url: URL): AuthnRequestSeen | null {
    const encoded = url.searchParams.get('SAMLRequest');
    if (!encoded) return null;
    const xml = inflateRawSync(Buffer.from(encoded, 'base64')).toString('utf8');
    const doc = new DOMParser().parseFromString(xml, 'text/xml');
    const root = doc.documentElement!;
    const issuer = doc.getElementsByTagNameNS('urn:oasis:names:tc:SAML:2.0:assertion', 'Issuer').item(0);
    return {
      id: root.getAttribute('ID') ?? '',
      acsUrl: root.getAttribute('AssertionConsumerServiceURL'),
      issuer: issuer?.textContent ?? null,
      relayState: url.searchParams.get('RelayState'),
    };
  }

  /** The assertion alone (signed unless told otherwise). */
  assertion(o: ResponseOptions): { xml: string; id: string } {
    const id = o.assertionId ?? newId();
    const now = new Date();
    const notBefore = o.notBefore ?? new Date(now.getTime() - 30_000);
    const notOnOrAfter = o.notOnOrAfter ?? new Date(now.getTime() + 5 * 60_000);
    const irt = o.inResponseTo ? ` InResponseTo="${o.inResponseTo}"` : '';
    const xml =
      `<saml:Assertion xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${id}" Version="2.0" IssueInstant="${iso(now)}">` +
      `<saml:Issuer>${o.issuer ?? this.entityId}</saml:Issuer>` +
      `<saml:Subject><saml:NameID Format="urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress">${o.email}</saml:NameID>` +
      `<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer">` +
      `<saml:SubjectConfirmationData NotOnOrAfter="${iso(notOnOrAfter)}" Recipient="${o.recipient ?? o.destination}"${irt}/>` +
      `</saml:SubjectConfirmation></saml:Subject>` +
      `<saml:Conditions NotBefore="${iso(notBefore)}" NotOnOrAfter="${iso(notOnOrAfter)}">` +
      `<saml:AudienceRestriction><saml:Audience>${o.audience}</saml:Audience></saml:AudienceRestriction></saml:Conditions>` +
      `<saml:AuthnStatement AuthnInstant="${iso(now)}" SessionIndex="${id}"><saml:AuthnContext>` +
      `<saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef>` +
      `</saml:AuthnContext></saml:AuthnStatement></saml:Assertion>`;
    return { xml: o.sign === false ? xml : TestIdp.signAssertion(xml, id, o.key ?? this.key), id };
  }

  /** A Response around assertions given as XML (so tests can arrange forged ones). */
  response(o: Pick<ResponseOptions, 'inResponseTo' | 'destination'>, assertionsXml: string): string {
    const irt = o.inResponseTo ? ` InResponseTo="${o.inResponseTo}"` : '';
    return (
      `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ` +
      `ID="${newId()}" Version="2.0" IssueInstant="${iso(new Date())}" Destination="${o.destination}"${irt}>` +
      `<saml:Issuer>${this.entityId}</saml:Issuer>` +
      `<samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>` +
      assertionsXml +
      `</samlp:Response>`
    );
  }

  /** The usual case: a response with one signed assertion, base64 as the HTTP-POST binding carries it. */
  signedResponse(o: ResponseOptions): string {
    return encode(this.response(o, this.assertion(o).xml));
  }

  static signAssertion(xml: string, id: string, key: IdpKey): string {
    const sig = new SignedXml({
      privateKey: key.privateKey,
      publicCert: key.certPem,
      signatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
      canonicalizationAlgorithm: 'http://www.w3.org/2001/10/xml-exc-c14n#',
    });
    sig.addReference({
      xpath: `//*[local-name(.)='Assertion' and @ID='${id}']`,
      transforms: ['http://www.w3.org/2000/09/xmldsig#enveloped-signature', 'http://www.w3.org/2001/10/xml-exc-c14n#'],
      digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256',
    });
    sig.computeSignature(xml, {
      location: {
        reference: `//*[local-name(.)='Assertion' and @ID='${id}']/*[local-name(.)='Issuer']`,
        action: 'after',
      },
    });
    return sig.getSignedXml();
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

export const encode = (xml: string) => Buffer.from(xml, 'utf8').toString('base64');

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function page(res: http.ServerResponse, status: number, title: string, body: string): void {
  res.writeHead(status, { 'Content-Type': 'text/html; charset=utf-8' });
  res.end(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>` +
      `<body><main><h1>${escapeHtml(title)}</h1>${body}</main></body></html>`,
  );
}

/** A loopback port with nothing listening (bound, then closed). */
export async function closedPort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}
