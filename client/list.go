package client

import "iter"

// List is one page of a list: newest first, HasMore when another page
// follows (ask for it with StartingAfter set to the last item's id, or use
// the method's All... iterator).
type List[T any] struct {
	Object  string `json:"object"`
	Data    []T    `json:"data"`
	HasMore bool   `json:"has_more"`
}

// paginate walks pages forward (starting_after the last item) or, when
// backward, towards newer items (ending_before the first item).
func paginate[T any](backward bool, page func(after, before string) (*List[T], error), cursor func(*T) string) iter.Seq2[*T, error] {
	return func(yield func(*T, error) bool) {
		after, before := "", ""
		for {
			p, err := page(after, before)
			if err != nil {
				yield(nil, err)
				return
			}
			for i := range p.Data {
				if !yield(&p.Data[i], nil) {
					return
				}
			}
			if !p.HasMore || len(p.Data) == 0 {
				return
			}
			if backward {
				before = cursor(&p.Data[0])
			} else {
				after = cursor(&p.Data[len(p.Data)-1])
			}
		}
	}
}
