/**
 * @module Reading a QR code the way a phone does: from pixels. A screenshot of the element, decoded with `jsqr`, and
 * the TOTP secret taken out of the `otpauth://` Key URI it holds.
 */
import jsQRModule from 'jsqr';
import type { Locator } from 'playwright-core';
import { PNG } from 'pngjs';

// jsqr is CommonJS with `exports.default`; whichever way the loader hands it over, `.default` is the function.
const jsQR = jsQRModule.default ?? (jsQRModule as unknown as typeof jsQRModule.default);

/** The text a QR code on the page holds. */
export async function readQrCode(code: Locator): Promise<string> {
  const png = PNG.sync.read(await code.screenshot());
  const found = jsQR(new Uint8ClampedArray(png.data.buffer, png.data.byteOffset, png.data.length), png.width, png.height);
  if (!found) throw new Error('no QR code could be read from the screenshot');
  return found.data;
}

/** The parts of a TOTP Key URI (otpauth://totp/<issuer>:<account>?secret=…&issuer=…). */
export function parseOtpauth(uri: string): {
  type: string;
  label: string;
  secret: string;
  issuer: string | null;
  digits: string | null;
  period: string | null;
} {
  const url = new URL(uri);
  if (url.protocol !== 'otpauth:') throw new Error(`not an otpauth URI: ${uri}`);
  return {
    type: url.host,
    label: decodeURIComponent(url.pathname.slice(1)),
    secret: url.searchParams.get('secret') ?? '',
    issuer: url.searchParams.get('issuer'),
    digits: url.searchParams.get('digits'),
    period: url.searchParams.get('period'),
  };
}
