#include "textflag.h"

// STOPMASK sets the low 16 bits of BX to flag the bytes of X0 that are not
// strSafe, given '"', '\\' and 0x20 in every byte of X1, X2 and X3: those
// equal to X1's or X2's, and those below 0x20 as signed bytes (c < 0x20 or
// c > 0x7F). It uses X4 to X6.
#define STOPMASK \
	MOVO X0, X4 \
	PCMPEQB X1, X4 \
	MOVO X0, X5 \
	PCMPEQB X2, X5 \
	MOVO X3, X6 \
	PCMPGTB X0, X6 \
	POR X5, X4 \
	POR X6, X4 \
	PMOVMSKB X4, BX

// func stringRun(s []byte, i int) (j int, x uint64, m uint64)
//
// See stringRun in stringrun.go. The bulk goes sixteen bytes at a time
// with SSE2, which every amd64 processor has: a byte c is not strSafe when
// c == '"', c == '\\', or 0x20 > c as a signed byte (c < 0x20 or c > 0x7F).
// A byte found is the first of the word returned, whose mask flags it
// alone (0x80).
TEXT ·stringRun(SB), NOSPLIT, $0-56
	MOVQ s_base+0(FP), SI
	MOVQ s_len+8(FP), DI
	MOVQ i+24(FP), AX
	MOVQ $0x2222222222222222, DX
	MOVQ DX, X1
	PUNPCKLQDQ X1, X1 // '"' in every byte
	MOVQ $0x5c5c5c5c5c5c5c5c, DX
	MOVQ DX, X2
	PUNPCKLQDQ X2, X2 // '\\' in every byte
	MOVQ $0x2020202020202020, DX
	MOVQ DX, X3
	PUNPCKLQDQ X3, X3 // 0x20 in every byte
	LEAQ -16(DI), CX  // the last offset a 16-byte load may start at

blocks:
	CMPQ AX, CX
	JGT word
	MOVOU (SI)(AX*1), X0
	STOPMASK
	TESTL BX, BX
	JNZ found
	ADDQ $16, AX
	JMP blocks

word:
	// Fewer than sixteen bytes left: eight of them, if there are.
	LEAQ 8(AX), DX
	CMPQ DX, DI
	JGT none
	MOVQ (SI)(AX*1), X0
	STOPMASK
	ANDL $0xff, BX // the zero bytes above the word do not count
	JNZ found
	MOVQ DX, AX

none:
	MOVQ AX, j+32(FP)
	MOVQ $0, x+40(FP)
	MOVQ $0, m+48(FP)
	RET

found:
	BSFL BX, BX
	ADDQ BX, AX
	LEAQ 8(AX), DX
	CMPQ DX, DI
	JGT none // fewer than eight bytes from it: the caller's lastBytes
	MOVQ (SI)(AX*1), DX
	MOVQ AX, j+32(FP)
	MOVQ DX, x+40(FP)
	MOVQ $0x80, m+48(FP)
	RET
