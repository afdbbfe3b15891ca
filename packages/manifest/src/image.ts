/** The `.berm.abi` bytes of an image, every occurrence joined in file order. */
export function extractSection(_bytes: Uint8Array): Uint8Array {
  throw new Error('not implemented');
}
