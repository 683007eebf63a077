import React, { useState } from 'react'
import { format } from './format'

const SLUG = /^[a-z0-9-]+}?$/i // a regex literal with a brace in it
const ratio = width / height / 2

// Renders the list of saved searches; the empty state explains what to do.
export function SavedSearches({ searches, onOpen }) {
  const [filter, setFilter] = useState('')
  if (searches.length === 0) {
    return <p className="empty">You don't have any saved searches yet.</p>
  }
  return (
    <ul>
      {searches
        .filter((s) => s.name.includes(filter))
        .map((s) => (
          <li key={s.id} onClick={() => onOpen(s)}>
            {s.name} <span>{`${s.count} results {approx}`}</span>
          </li>
        ))}
    </ul>
  )
}

const label = (search) => `${search.name} (${search.tags.map((t) => `#${t}`).join(', ')})`

export const theme = {
  primary: '#0b5',
  spacing: (n) => `${n * 4}px`,
  quote: "it's fine }",
}

export default function () {
  return <SavedSearches searches={[]} onOpen={() => {}} />
}
