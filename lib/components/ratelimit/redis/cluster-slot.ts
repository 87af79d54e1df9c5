// The Redis Cluster hash slot of a key, computed as the server does (CRC16-XMODEM of the hash tag, mod 16384), so
// that decisions on one slot can share one script call.

const TABLE = new Uint16Array(256)
for (let i = 0; i < 256; i++) {
  let crc = i << 8
  for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff
  TABLE[i] = crc
}

function crc16(text: string): number {
  let crc = 0
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code >= 0x80) return crc16Bytes(Buffer.from(text, 'utf8'))
    crc = ((crc << 8) & 0xffff) ^ TABLE[((crc >> 8) ^ code) & 0xff]
  }
  return crc
}

function crc16Bytes(bytes: Uint8Array): number {
  let crc = 0
  for (let i = 0; i < bytes.length; i++) crc = ((crc << 8) & 0xffff) ^ TABLE[((crc >> 8) ^ bytes[i]) & 0xff]
  return crc
}

/** The slot of `key`: only the part between the first '{' and the next '}' counts, when that part is not empty. */
export function clusterSlot(key: string): number {
  const open = key.indexOf('{')
  if (open >= 0) {
    const close = key.indexOf('}', open + 1)
    if (close > open + 1) return crc16(key.slice(open + 1, close)) & 16383
  }
  return crc16(key) & 16383
}
