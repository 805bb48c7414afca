import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A key and the certificate chain an https stand-in serves. */
export interface TlsIdentity {
  key: string;
  cert: string;
}

export interface LocalCa {
  /** The CA's certificate: what a client trusts (NODE_EXTRA_CA_CERTS, curl --cacert). */
  caFile: string;
  /** The server certificate for localhost and 127.0.0.1, issued by that CA. */
  server: TlsIdentity;
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: 'ignore' });
}

/**
 * A private certificate authority of one's own and a server certificate it issued for `localhost`,
 * `127.0.0.1` and `::1`, made by openssl in `dir` (kept there and reused while the server certificate is
 * valid, so a client told to trust the CA once keeps trusting it).
 */
export function localCa(dir: string): LocalCa {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const caFile = join(dir, 'ca.pem');
  const keyFile = join(dir, 'server-key.pem');
  const certFile = join(dir, 'server.pem');
  const fresh = (() => {
    if (![caFile, keyFile, certFile].every((f) => existsSync(f))) return false;
    try {
      openssl(['x509', '-checkend', '86400', '-noout', '-in', certFile], dir);
      return true;
    } catch {
      return false;
    }
  })();
  if (!fresh) {
    openssl(
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-sha256',
        '-days',
        '825',
        '-subj',
        '/CN=SDF stand-ins local CA',
        '-addext',
        'basicConstraints=critical,CA:TRUE',
        '-addext',
        'keyUsage=critical,keyCertSign,cRLSign',
        '-keyout',
        'ca-key.pem',
        '-out',
        'ca.pem',
      ],
      dir,
    );
    openssl(
      [
        'req',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-subj',
        '/CN=localhost',
        '-keyout',
        'server-key.pem',
        '-out',
        'server.csr',
      ],
      dir,
    );
    writeFileSync(
      join(dir, 'server.ext'),
      'subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n',
    );
    openssl(
      [
        'x509',
        '-req',
        '-in',
        'server.csr',
        '-CA',
        'ca.pem',
        '-CAkey',
        'ca-key.pem',
        '-CAcreateserial',
        '-days',
        '397',
        '-sha256',
        '-extfile',
        'server.ext',
        '-out',
        'server.pem',
      ],
      dir,
    );
  }
  return {
    caFile,
    server: { key: readFileSync(keyFile, 'utf8'), cert: readFileSync(certFile, 'utf8') },
  };
}
