package jsontree

// Root is the document's top value.
func (d *Doc) Root() int32 { return 0 }

// Node returns node i.
func (d *Doc) Node(i int32) *Node { return &d.nodes[i] }

// Kind is node i's kind.
func (d *Doc) Kind(i int32) Kind { return d.nodes[i].Kind }

// Members lists object i's members in document order (nil for other kinds).
func (d *Doc) Members(i int32) []Member {
	n := &d.nodes[i]
	if n.Kind != Object {
		return nil
	}
	return d.members[n.first : n.first+n.n : n.first+n.n]
}

// Elems lists array i's elements (nil for other kinds).
func (d *Doc) Elems(i int32) []int32 {
	n := &d.nodes[i]
	if n.Kind != Array {
		return nil
	}
	return d.elems[n.first : n.first+n.n : n.first+n.n]
}

// Get is the value of key in object i; ok is false when i is no object or has no such key.
func (d *Doc) Get(i int32, key string) (int32, bool) {
	for _, m := range d.Members(i) {
		if m.Key == key {
			return m.Val, true
		}
	}
	return 0, false
}

// Raw is node i's bytes as sent (capacity capped, so appending to it never writes into the source).
func (d *Doc) Raw(i int32) []byte {
	n := &d.nodes[i]
	return d.src[n.Start:n.End:n.End]
}
