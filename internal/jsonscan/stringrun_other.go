//go:build !amd64

package jsonscan

// stringRun is stringRunGo: see stringrun.go.
func stringRun(s []byte, i int) (int, uint64, uint64) { return stringRunGo(s, i) }
