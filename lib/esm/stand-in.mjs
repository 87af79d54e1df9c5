// Stand-ins for the exports of the ES module faces (dist/esm/*.mjs, written by scripts/build-ts.js). An import binds
// every name of an entry at once, so a face that read each name from the CommonJS build would load every component
// of the entry, and the addon, at import. Each name is bound instead to a stand-in: a Proxy that loads the value it
// stands for on its first use (a call, `new`, a property read, `instanceof`, `extends`, ...), forwards that use, and
// from then on every operation. The face also rebinds its exported name to the real value at that first use, so
// what a module imported is the real class, function or object from then on (docs/guide/install.md, "Entry points
// and what loading costs").
//
// A Proxy must agree with its target about non-configurable properties and extensibility (ECMAScript's proxy
// invariants): the target is an empty function or object of the same kind as the value, and the value's
// non-configurable properties (a class's `prototype`, say) are copied onto it when the value is loaded.

/**
 * A stand-in for a value loaded on first use.
 * @param {'constructor' | 'function' | 'object'} kind what the value is: a class or a function with a
 *   `prototype`, a function without one (an arrow or a method), or an object.
 * @param {() => object} load returns the value (and may rebind the face's export to it).
 */
export function standIn(kind, load) {
  const target = kind === 'constructor' ? function () {} : kind === 'function' ? () => {} : {}
  let value
  const real = () => {
    if (value === undefined) {
      value = load()
      copyFixedProperties(value, target)
    }
    return value
  }
  const proxy = new Proxy(target, {
    apply: (_, self, args) => Reflect.apply(real(), self, args),
    // `new` of the stand-in makes an instance of the value; a subclass's `super()` keeps its own new.target.
    construct: (_, args, newTarget) => Reflect.construct(real(), args, newTarget === proxy ? real() : newTarget),
    get: (_, key, receiver) => Reflect.get(real(), key, receiver === proxy ? real() : receiver),
    set: (_, key, v, receiver) => Reflect.set(real(), key, v, receiver === proxy ? real() : receiver),
    has: (_, key) => Reflect.has(real(), key),
    ownKeys: () => Reflect.ownKeys(real()),
    getOwnPropertyDescriptor: (_, key) => Reflect.getOwnPropertyDescriptor(real(), key),
    defineProperty: (_, key, descriptor) => {
      const done = Reflect.defineProperty(real(), key, descriptor)
      if (done) copyFixedProperties(value, target)
      return done
    },
    deleteProperty: (_, key) => Reflect.deleteProperty(real(), key),
    getPrototypeOf: () => Reflect.getPrototypeOf(real()),
    setPrototypeOf: (_, prototype) => Reflect.setPrototypeOf(real(), prototype),
    isExtensible: () => Reflect.isExtensible(real()),
    preventExtensions: () => {
      const done = Reflect.preventExtensions(real())
      if (done) copyFixedProperties(value, target)
      return done
    },
  })
  return proxy
}

// The target holds what the proxy invariants check: every non-configurable property of the value (all of them
// once the value cannot be extended), and the value's extensibility.
function copyFixedProperties(value, target) {
  const sealed = !Reflect.isExtensible(value)
  for (const key of Reflect.ownKeys(value)) {
    const descriptor = Reflect.getOwnPropertyDescriptor(value, key)
    if (sealed || !descriptor.configurable) Reflect.defineProperty(target, key, descriptor)
  }
  if (sealed) Reflect.preventExtensions(target)
}
