import { MissingPeerDependencyError } from '../../foundation/errors/missing-peer-dependency-error'

/**
 * Loads an optional peer dependency when a feature first needs it (never when bulwark loads), from where the
 * application installed it.
 */
export function loadPeer<T>(dependency: string, feature: string): T {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require(dependency) as T
  } catch (error) {
    const code = (error as { code?: string }).code
    if (code === 'MODULE_NOT_FOUND' && String((error as Error).message).includes(`'${dependency}'`)) {
      throw new MissingPeerDependencyError(dependency, feature, error)
    }
    throw error
  }
}
