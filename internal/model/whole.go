package model

import (
	"slices"
	"strings"
)

// Whole-collection calls. They keep working after Close.

// Live returns the live documents, sorted by id.
func (m *Model) Live() []Doc {
	var out []Doc
	for _, d := range m.docs {
		if !m.expired(d) {
			out = append(out, d)
		}
	}
	slices.SortFunc(out, func(a, b Doc) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// IDs returns the ids of the live documents, sorted.
func (m *Model) IDs() []string {
	var out []string
	for _, d := range m.Live() {
		out = append(out, d.ID)
	}
	return out
}

// Len returns the number of live documents.
func (m *Model) Len() int { return len(m.Live()) }

// Stats returns the counts: live documents, expired ones still stored, and
// documents ever removed because they expired.
func (m *Model) Stats() Stats {
	live := m.Len()
	return Stats{Live: live, Expired: len(m.docs) - live, Swept: m.swept}
}

// Sweep removes every expired document, reports each, and returns how many.
func (m *Model) Sweep() int {
	if m.closed && m.durable {
		return 0
	}
	n := 0
	for _, d := range m.docs {
		if m.expired(d) {
			m.removeExpired(d)
			n++
		}
	}
	return n
}

// SetDefaultTTL changes the DefaultTTL. A change to a different value first
// removes (and reports) every document expired under the old one (R13); the
// same value changes nothing. An invalid value is ErrInvalidTTL, checked
// before ErrClosed.
func (m *Model) SetDefaultTTL(p *int32) error {
	def, err := checkDefault(p)
	if err != nil {
		return err
	}
	if m.closed {
		return ErrClosed
	}
	if def != m.def {
		m.Sweep()
		m.def = def
	}
	return nil
}

// Close makes the calls on one document, and SetDefaultTTL, return
// ErrClosed from now on.
func (m *Model) Close() { m.closed = true }

// SetDurable makes the model one of a durable collection, whose Sweep after
// Close removes nothing: it could not log the removal, and a removal that
// is not logged would be reported again after the next Open.
func (m *Model) SetDurable() { m.durable = true }

// TakeExpired returns the documents removed because they expired since the
// last call, in no particular order, and forgets them.
func (m *Model) TakeExpired() []Doc {
	out := m.removed
	m.removed = nil
	return out
}
