import { ApiProperty } from '@nestjs/swagger';
import { IsIn } from 'class-validator';
import { EX } from '../../openapi/examples.js';
import { publicKeyToJwk, type SignatureAlgorithm } from '../../sdf/index.js';
import type { SigningKey } from '../entities/signing-key.entity.js';

export const SIGNING_ALGORITHMS: readonly SignatureAlgorithm[] = ['ECDSA-P256', 'RSA-2048'];

export class RotateSigningKeyDto {
  @ApiProperty({ enum: SIGNING_ALGORITHMS, example: 'ECDSA-P256' })
  @IsIn(SIGNING_ALGORITHMS, { message: 'algorithm must be ECDSA-P256 or RSA-2048' })
  algorithm: SignatureAlgorithm;
}

/** A public JWK as published (RFC 7517): EC keys carry crv/x/y, RSA keys n/e. */
export class JwkDto {
  @ApiProperty({ enum: ['EC', 'RSA'], example: 'EC' }) kty: string;
  @ApiProperty({ example: EX.keyThumbprint, description: 'The key_id' }) kid: string;
  @ApiProperty({ enum: ['ES256', 'RS256'], example: 'ES256' }) alg: string;
  @ApiProperty({ enum: ['sig'], example: 'sig' }) use: string;
  @ApiProperty({ required: false, example: 'P-256', description: 'EC keys' }) crv?: string;
  @ApiProperty({ required: false, example: 'I6QbhXwJ7zmieo4hhe-OnEoLKb6KBMe7o_hIWvxisT0', description: 'EC keys' })
  x?: string;
  @ApiProperty({ required: false, example: 'TJDzErHQt1IDt2WJVP4-WViRFT_uy9gtWr8vGxl_YEs', description: 'EC keys' })
  y?: string;
  @ApiProperty({
    required: false,
    example: '0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECP',
    description: 'RSA keys (shortened here)',
  })
  n?: string;
  @ApiProperty({ required: false, example: 'AQAB', description: 'RSA keys' }) e?: string;
}

export class JwksDto {
  @ApiProperty({ type: [JwkDto], description: 'Active and rotated keys: rotated ones still verify older signatures' })
  keys: JwkDto[];
}

export class PublicSigningKeyDto {
  @ApiProperty({ example: EX.keyThumbprint }) key_id: string;
  @ApiProperty({ enum: SIGNING_ALGORITHMS, example: 'ECDSA-P256' }) algorithm: SignatureAlgorithm;
  @ApiProperty({ description: 'The key new signatures are made with', example: true }) is_active: boolean;
  @ApiProperty({ format: 'date-time', example: EX.createdAt }) created_at: string;
  @ApiProperty({
    description: 'SPKI PEM',
    example:
      '-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEI6QbhXwJ7zmieo4hhe+OnEoLKb6K\n' +
      'BMe7o/hIWvxisT1MkPMSsdC3UgO3ZYlU/j5ZWJEVP+7L2C1avy8bGX9gSw==\n-----END PUBLIC KEY-----\n',
  })
  public_key: string;
  @ApiProperty({ type: JwkDto }) public_jwk: JwkDto;

  static from(row: SigningKey): PublicSigningKeyDto {
    return {
      key_id: row.key_id,
      algorithm: row.algorithm,
      is_active: row.is_active,
      created_at: row.created_at.toISOString(),
      public_key: row.public_key,
      public_jwk: publicJwkOf(row),
    };
  }
}

export class PublicSigningKeyListDto {
  @ApiProperty({ type: [PublicSigningKeyDto], description: 'Newest first' })
  keys: PublicSigningKeyDto[];
}

/** The public JWK of a stored key, mapped member by member so nothing but public parameters is ever published. */
export function publicJwkOf(row: Pick<SigningKey, 'public_key' | 'key_id'>): JwkDto {
  const jwk = publicKeyToJwk(row.public_key, row.key_id);
  const base = { kty: jwk.kty!, kid: jwk.kid, alg: jwk.alg, use: jwk.use };
  return jwk.kty === 'EC' ? { ...base, crv: jwk.crv, x: jwk.x, y: jwk.y } : { ...base, n: jwk.n, e: jwk.e };
}
