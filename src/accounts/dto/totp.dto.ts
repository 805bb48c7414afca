import { ApiProperty } from '@nestjs/swagger';
import { IsString, MaxLength, MinLength } from 'class-validator';
import { EX } from '../../openapi/examples.js';

export class TotpSetupDto {
  @ApiProperty({ description: 'Base32 secret, for manual entry', example: 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP' })
  secret: string;
  @ApiProperty({ example: 'otpauth://totp/SDF:owner%40acme.example?secret=...&issuer=SDF' }) otpauth_url: string;
  @ApiProperty({
    description: 'The otpauth URL as a QR code (SVG document)',
    example: '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 37 37">…</svg>',
  })
  qr_svg: string;
}

export class TotpCodeDto {
  @ApiProperty({
    description: 'A 6-digit code from the authenticator, or (disable) a recovery code',
    example: '123456',
  })
  @IsString()
  @MinLength(6)
  @MaxLength(32)
  code: string;
}

export class TotpValidateDto {
  @ApiProperty({ description: 'From the login answer', example: EX.opaqueToken })
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  session_token: string;

  @ApiProperty({ description: 'A 6-digit code, or one of the recovery codes', example: '123456' })
  @IsString()
  @MinLength(6)
  @MaxLength(32)
  code: string;
}

export class RecoveryCodesDto {
  @ApiProperty({
    type: [String],
    description: 'Ten single-use codes, shown only in this answer',
    example: ['k7q2m-x4prt', 'r9tdw-3zlha', 'e5nvc-8gj2s'],
  })
  recovery_codes: string[];
}
