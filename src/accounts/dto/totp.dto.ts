import { ApiProperty } from '@nestjs/swagger';
import { IsString, MaxLength, MinLength } from 'class-validator';

export class TotpSetupDto {
  @ApiProperty({ description: 'Base32 secret, for manual entry' }) secret: string;
  @ApiProperty({ example: 'otpauth://totp/SDF:owner%40acme.example?secret=...&issuer=SDF' }) otpauth_url: string;
  @ApiProperty({ description: 'The otpauth URL as a QR code (SVG document)' }) qr_svg: string;
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
  @ApiProperty({ description: 'From the login answer' })
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
  @ApiProperty({ type: [String], description: 'Ten single-use codes, shown only in this answer' })
  recovery_codes: string[];
}
