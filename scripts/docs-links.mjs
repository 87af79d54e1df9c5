// Markdown helpers for scripts/build-readme.mjs: GitHub's heading anchors, and a check that every relative link of
// every page (generated or hand-written) points at a file that exists and, for a `#anchor`, at a heading it has.
import * as fs from 'fs'
import * as path from 'path'

/** Applies `change` to every line outside fenced code blocks. */
export function outsideCode(text, change) {
  let fenced = false
  return text
    .split('\n')
    .map((line) => {
      const fence = /^\s*```/.test(line)
      if (fence) fenced = !fenced
      return fenced || fence ? line : change(line)
    })
    .join('\n')
}

/** GitHub's anchors for a page's headings: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
export function anchors(text) {
  const seen = new Map()
  const found = new Set()
  outsideCode(text, (line) => {
    const heading = /^#{1,6} (.*)$/.exec(line)
    if (heading) {
      const base = heading[1]
        .toLowerCase()
        .replace(/[^\p{L}\p{N} _-]/gu, '')
        .trim()
        .replace(/ /g, '-')
      const count = seen.get(base) ?? 0
      seen.set(base, count + 1)
      found.add(count === 0 ? base : `${base}-${count}`)
    }
    return line
  })
  return found
}

/** Calls `visit(target, line)` for every markdown link target outside code. */
export function forEachLink(text, visit) {
  outsideCode(text, (line) => {
    for (const match of line.matchAll(/\]\(([^)\s]+)\)/g)) visit(match[1])
    return line
  })
}

/**
 * The broken relative links of `pages` ({ file, text }, paths from `root`); a link to one of the pages is checked
 * against its text, a link to anything else against the disk.
 */
export function brokenLinks(root, pages) {
  const byFile = new Map(pages.map((page) => [path.normalize(page.file), page.text]))
  const textOf = (file) =>
    byFile.get(file) ?? (file.endsWith('.md') ? fs.readFileSync(path.join(root, file), 'utf8') : '')
  const broken = []
  for (const page of pages) {
    forEachLink(page.text, (target) => {
      if (/^[a-z]+:/i.test(target)) return
      const [file, anchor] = target.split('#')
      const resolved = file ? path.normalize(path.join(path.dirname(page.file), file)) : path.normalize(page.file)
      if (!byFile.has(resolved) && !fs.existsSync(path.join(root, resolved))) {
        broken.push(`${page.file}: ${target} (no such file)`)
      } else if (anchor !== undefined && resolved.endsWith('.md') && !anchors(textOf(resolved)).has(anchor)) {
        broken.push(`${page.file}: ${target} (no such heading)`)
      }
    })
  }
  return broken
}
