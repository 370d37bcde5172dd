/**
 * @module A QR code drawn in the page as SVG from the `qrcode` package's module matrix: computed in the browser,
 * nothing fetched, no markup built from text (the encoded text is data, never HTML).
 */
import { create } from 'qrcode';

/** Modules of white border around the code, as the QR specification asks (the quiet zone). */
const QUIET_ZONE = 4;
/** Pixels per module: a phone's camera reads it from the screen, and so does a test from a screenshot. */
const MODULE_PX = 5;

export function QrCode({ text, label }: { text: string; label: string }) {
  const { modules } = create(text, { errorCorrectionLevel: 'M' });
  const size = modules.size + 2 * QUIET_ZONE;
  let path = '';
  for (let row = 0; row < modules.size; row += 1) {
    for (let col = 0; col < modules.size; col += 1) {
      if (modules.get(row, col)) path += `M${col + QUIET_ZONE} ${row + QUIET_ZONE}h1v1h-1z`;
    }
  }
  return (
    <svg
      class="qr"
      role="img"
      aria-label={label}
      viewBox={`0 0 ${size} ${size}`}
      width={size * MODULE_PX}
      height={size * MODULE_PX}
      shape-rendering="crispEdges"
    >
      <rect width={size} height={size} fill="#fff" />
      <path d={path} fill="#000" />
    </svg>
  );
}
