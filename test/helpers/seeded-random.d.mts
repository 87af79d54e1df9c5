/** mulberry32: a small seeded generator of uniforms in [0, 1). */
export function seededRandom(seed: number): () => number
