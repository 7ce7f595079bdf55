#include "textflag.h"

// func stopIndex16(s []byte) int
//
// The offset of the first byte of s that is not strSafe (a control
// character, '"', '\\', or a byte above 0x7F), looking sixteen bytes at a
// time with SSE2, which every amd64 processor has; or, if none of the
// first len(s)&^15 bytes is one, len(s)&^15.
TEXT ·stopIndex16(SB), NOSPLIT, $0-32
	MOVQ s_base+0(FP), SI
	MOVQ s_len+8(FP), CX
	ANDQ $~15, CX
	XORQ AX, AX
	MOVQ $0x2222222222222222, DX
	MOVQ DX, X1
	PUNPCKLQDQ X1, X1 // '"' in every byte
	MOVQ $0x5c5c5c5c5c5c5c5c, DX
	MOVQ DX, X2
	PUNPCKLQDQ X2, X2 // '\\' in every byte
	MOVQ $0x2020202020202020, DX
	MOVQ DX, X3
	PUNPCKLQDQ X3, X3 // 0x20 in every byte

loop:
	CMPQ AX, CX
	JGE done
	MOVOU (SI)(AX*1), X0
	MOVO X0, X4
	PCMPEQB X1, X4 // '"'
	MOVO X0, X5
	PCMPEQB X2, X5 // '\\'
	MOVO X3, X6
	PCMPGTB X0, X6 // 0x20 > c as signed bytes: c < 0x20 or c > 0x7F
	POR X5, X4
	POR X6, X4
	PMOVMSKB X4, BX
	TESTL BX, BX
	JNZ found
	ADDQ $16, AX
	JMP loop

found:
	BSFL BX, BX
	ADDQ BX, AX

done:
	MOVQ AX, ret+24(FP)
	RET
