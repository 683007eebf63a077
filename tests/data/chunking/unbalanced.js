'use strict'

/**
 * A file cut off in the middle: its braces never balance.
 */
function open(path) {
  return fs.readFileSync(path, 'utf8')
}

function broken(a) {
  if (a) {
    return a
  // the closing braces were lost

export const after = 1
