package jsonscan

// stringRun is in stringrun_amd64.s; see stringrun.go.
//
//go:noescape
func stringRun(s []byte, i int) (j int, x uint64, m uint64)
