// The route table's matcher (docs/guide/gateway.md, "Routes"): static segments before parameters before `*`, a
// failed static branch falling back, case and a trailing slash ignored, HEAD served by GET, the query left out.
import { describe, expect, it } from 'vitest'

import { RouteMatcher } from '../../lib/guards/inbound/route-matcher'
import { InvalidOptionError } from '../../lib/index'

function table(routes: Array<[string | undefined, string]>): RouteMatcher<string> {
  const m = new RouteMatcher<string>()
  for (const [method, pattern] of routes) m.add(method, pattern, `${method ?? '*'} ${pattern}`, 'routes')
  return m
}

describe('RouteMatcher', () => {
  const m = table([
    ['GET', '/users/me'],
    ['GET', '/users/:id'],
    [undefined, '/users/:id/posts'],
    ['POST', '/users'],
    [undefined, '/static/*'],
    ['GET', '/'],
    [undefined, '/pkg.Service/*'],
    ['POST', '/pkg.Service/Hot'],
  ])
  const cases: Array<[string, string, string | undefined]> = [
    ['GET', '/users/me', 'GET /users/me'],
    ['GET', '/users/42', 'GET /users/:id'],
    ['GET', '/users/me/posts', '* /users/:id/posts'], // the static branch 'me' fails deeper: the parameter's holds
    ['DELETE', '/users/42/posts?page=2', '* /users/:id/posts'],
    ['POST', '/users', 'POST /users'],
    ['GET', '/users', undefined],
    ['POST', '/USERS/', 'POST /users'], // case and a trailing slash ignored
    ['HEAD', '/users/7', 'GET /users/:id'], // HEAD is served by GET
    ['PUT', '/users/7', undefined],
    ['GET', '/users//posts', undefined], // an empty segment is no parameter
    ['GET', '/static/css/site.css', '* /static/*'],
    ['GET', '/static', '* /static/*'],
    ['GET', '/', 'GET /'],
    ['GET', '/?x=1', 'GET /'],
    ['POST', '/pkg.Service/Hot', 'POST /pkg.Service/Hot'],
    ['POST', '/pkg.Service/Other', '* /pkg.Service/*'],
    ['GET', 'http://example.com/users/me', undefined], // absolute-form: no path to match
    ['GET', '', undefined],
  ]
  for (const [method, url, expected] of cases) {
    it(`${method} ${url} -> ${expected}`, () => {
      expect(m.match(method, url)).toBe(expected)
      expect(m.match(method, url)).toBe(expected) // the remembered last match
    })
  }

  it('answers nothing for a request without a method or URL it can read', () => {
    expect(m.match(undefined, '/users/me')).toBeUndefined()
    expect(m.match('GET', undefined)).toBeUndefined()
    expect(m.match('GET', 42)).toBeUndefined()
  })

  it('refuses patterns it cannot match, and a route given twice', () => {
    const bad = ['users', '/a b', '/a?b', '/a/*/b', '/files*', '/:', '/a/:/b']
    for (const pattern of bad) expect(() => table([['GET', pattern]]), pattern).toThrow(InvalidOptionError)
    expect(() =>
      table([
        ['GET', '/a'],
        ['GET', '/A/'],
      ]),
    ).toThrow(/given once/)
    expect(() =>
      table([
        [undefined, '/a/*'],
        [undefined, '/a/*'],
      ]),
    ).toThrow(/given once/)
  })
})
