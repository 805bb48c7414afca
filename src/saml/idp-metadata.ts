import { DOMParser, type Element } from '@xmldom/xmldom';

const MD = 'urn:oasis:names:tc:SAML:2.0:metadata';
const DS = 'http://www.w3.org/2000/09/xmldsig#';
export const HTTP_REDIRECT = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect';

/** What the service keeps from an identity provider's metadata. */
export interface IdpMetadata {
  entityId: string;
  ssoUrl: string;
  /** Base64 DER of every signing certificate (several while the IdP rolls its key over). */
  certificates: string[];
}

export class MetadataError extends Error {}

/** C1: a document type declaration can define entities (expansion, external fetches): never parsed. */
export function hasDoctype(xml: string): boolean {
  return /<!DOCTYPE|<!ENTITY/i.test(xml);
}

function children(parent: Element, ns: string, local: string): Element[] {
  const out: Element[] = [];
  const list = parent.getElementsByTagNameNS(ns, local);
  for (let i = 0; i < list.length; i++) out.push(list.item(i)!);
  return out;
}

/**
 * Reads an IdP's SAML metadata: the IDPSSODescriptor's HTTP-Redirect SingleSignOnService and every
 * certificate of a KeyDescriptor used for signing (no `use` means both signing and encryption).
 * Anything missing is a MetadataError with a sentence the operator can act on.
 */
export function parseIdpMetadata(xml: string): IdpMetadata {
  if (hasDoctype(xml)) throw new MetadataError('metadata with a DOCTYPE is refused');
  let doc;
  try {
    doc = new DOMParser({
      onError: (level, msg) => {
        if (level !== 'warning') throw new MetadataError(`metadata is not well-formed XML: ${msg}`);
      },
    }).parseFromString(xml, 'text/xml');
  } catch (err) {
    throw err instanceof MetadataError ? err : new MetadataError(`metadata is not well-formed XML`);
  }
  const root = doc.documentElement;
  if (!root) throw new MetadataError('metadata is empty');
  const entity =
    root.localName === 'EntityDescriptor' && root.namespaceURI === MD
      ? root
      : children(root, MD, 'EntityDescriptor').find((e) => children(e, MD, 'IDPSSODescriptor').length > 0);
  if (!entity) throw new MetadataError('no EntityDescriptor with an IDPSSODescriptor');
  const entityId = entity.getAttribute('entityID') ?? '';
  const idp = children(entity, MD, 'IDPSSODescriptor')[0];
  if (!idp) throw new MetadataError('no IDPSSODescriptor');
  const sso = children(idp, MD, 'SingleSignOnService').find((s) => s.getAttribute('Binding') === HTTP_REDIRECT);
  const ssoUrl = sso?.getAttribute('Location') ?? '';
  if (!/^https?:\/\//i.test(ssoUrl)) {
    throw new MetadataError('no SingleSignOnService with the HTTP-Redirect binding and an http(s) Location');
  }
  const certificates: string[] = [];
  for (const kd of children(idp, MD, 'KeyDescriptor')) {
    const use = kd.getAttribute('use');
    if (use && use !== 'signing') continue;
    for (const c of children(kd, DS, 'X509Certificate')) {
      const b64 = (c.textContent ?? '').replace(/\s+/g, '');
      if (b64 && /^[A-Za-z0-9+/]+=*$/.test(b64) && !certificates.includes(b64)) certificates.push(b64);
    }
  }
  if (certificates.length === 0) throw new MetadataError('no signing certificate in the IDPSSODescriptor');
  return { entityId, ssoUrl, certificates };
}
