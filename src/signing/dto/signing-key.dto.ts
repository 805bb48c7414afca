import { ApiProperty } from '@nestjs/swagger';
import { IsIn } from 'class-validator';
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
  @ApiProperty({ enum: ['EC', 'RSA'] }) kty: string;
  @ApiProperty({ example: 'kXn3...', description: 'The key_id' }) kid: string;
  @ApiProperty({ enum: ['ES256', 'RS256'] }) alg: string;
  @ApiProperty({ enum: ['sig'] }) use: string;
  @ApiProperty({ required: false, example: 'P-256' }) crv?: string;
  @ApiProperty({ required: false }) x?: string;
  @ApiProperty({ required: false }) y?: string;
  @ApiProperty({ required: false }) n?: string;
  @ApiProperty({ required: false }) e?: string;
}

export class JwksDto {
  @ApiProperty({ type: [JwkDto], description: 'Active and rotated keys: rotated ones still verify older signatures' })
  keys: JwkDto[];
}

export class PublicSigningKeyDto {
  @ApiProperty({ example: 'kXn3Qb1u8Yd0mZ0hV1c3T2c6bWQxQn1x4qkS3R8bVdE' }) key_id: string;
  @ApiProperty({ enum: SIGNING_ALGORITHMS }) algorithm: SignatureAlgorithm;
  @ApiProperty({ description: 'The key new signatures are made with' }) is_active: boolean;
  @ApiProperty({ example: '2026-03-15T13:30:00.000Z' }) created_at: string;
  @ApiProperty({ description: 'SPKI PEM' }) public_key: string;
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
