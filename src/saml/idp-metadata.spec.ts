import { describe, expect, it } from 'vitest';
import { MetadataError, parseIdpMetadata } from './idp-metadata.js';

const md = (keys: string, sso = 'https://idp.example/sso') => `<?xml version="1.0"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="https://idp.example/">
  <md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    ${keys}
    <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="https://idp.example/post"/>
    <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${sso}"/>
  </md:IDPSSODescriptor>
</md:EntityDescriptor>`;
const key = (cert: string, use?: string) =>
  `<md:KeyDescriptor${use ? ` use="${use}"` : ''}><ds:KeyInfo><ds:X509Data><ds:X509Certificate>
  ${cert}
  </ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>`;

describe('parseIdpMetadata', () => {
  it('reads the entity id, the HTTP-Redirect SSO URL and every signing certificate', () => {
    const out = parseIdpMetadata(md(key('QUFB', 'signing') + key('QkJC') + key('Q0ND', 'encryption')));
    expect(out).toEqual({
      entityId: 'https://idp.example/',
      ssoUrl: 'https://idp.example/sso',
      certificates: ['QUFB', 'QkJC'],
    });
  });

  it.each([
    ['no certificate', md(key('QUFB', 'encryption'))],
    ['no redirect SSO service', md(key('QUFB')).replace(/HTTP-Redirect/, 'SOAP')],
    ['not XML', 'not xml at all <'],
    ['a DOCTYPE', `<!DOCTYPE x [<!ENTITY e "x">]>${md(key('QUFB'))}`],
    ['another document', '<html><body/></html>'],
  ])('refuses metadata with %s', (_name, xml) => {
    expect(() => parseIdpMetadata(xml)).toThrow(MetadataError);
  });
});
