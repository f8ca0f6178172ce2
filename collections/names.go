package collections

import "strconv"

func itoa(i int32) string { return strconv.Itoa(int(i)) }
