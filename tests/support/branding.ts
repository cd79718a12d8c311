import { deflateSync } from 'node:zlib'
import { type Caller, credentials } from './callers'
import type { Json } from './users'

/** A CRC-32 of PNG chunks (ISO 3309, as PNG §5.5 asks). */
function crc32(bytes: Uint8Array): number {
  let c = ~0
  for (const b of bytes) {
    c ^= b
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0xedb88320 : c >>> 1
  }
  return ~c >>> 0
}

function chunk(type: string, data: Uint8Array): Buffer {
  const head = Buffer.alloc(8)
  head.writeUInt32BE(data.length, 0)
  head.write(type, 4, 'ascii')
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0)
  return Buffer.concat([head, data, crc])
}

/** A real PNG of `width`×`height` in one RGB colour: something a browser decodes (naturalWidth > 0). */
export function solidPng(
  width: number,
  height: number,
  [r, g, b]: [number, number, number],
): Uint8Array<ArrayBuffer> {
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(width, 0)
  ihdr.writeUInt32BE(height, 4)
  ihdr.set([8, 2, 0, 0, 0], 8)
  const row = Buffer.alloc(1 + width * 3)
  for (let x = 0; x < width; x++) row.set([r, g, b], 1 + x * 3)
  const raw = Buffer.concat(Array.from({ length: height }, () => row))
  return new Uint8Array(
    Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      chunk('IHDR', ihdr),
      chunk('IDAT', deflateSync(raw)),
      chunk('IEND', new Uint8Array()),
    ]),
  )
}

/** Uploads `bytes` as the multipart field `logo`, named and typed as a browser would say. */
export async function uploadLogo(
  baseUrl: string,
  who: Caller,
  ws: string,
  bytes: Uint8Array<ArrayBuffer> | string,
  filename: string,
  type = 'application/octet-stream',
) {
  const form = new FormData()
  form.append('logo', new File([bytes], filename, { type }))
  const res = await fetch(`${baseUrl}/v1/workspaces/${ws}/branding/logo`, {
    method: 'POST',
    headers: { accept: 'application/json', ...credentials(who) },
    body: form,
  })
  const text = await res.text()
  return { status: res.status, body: (text ? JSON.parse(text) : null) as Json }
}
