/* bpf.c - a classic-BPF interpreter for seccomp programs: runs a program on one struct
 * seccomp_data the way the kernel does, so the tests (and anyone curious) can check what the
 * exported filter answers for a call without loading it. Pure: no I/O, no allocation.
 *
 * It accepts the instructions the kernel's seccomp checker accepts (loads of 32-bit words of
 * seccomp_data, the scratch memory, the ALU, forward jumps, returns) and nothing else, checks
 * the whole program first as the kernel does (bounds of every jump and load, a return last),
 * then runs it; cBPF jumps only forward, so a program ends within @len steps.
 */
#include "sandbox/sandbox.h"

#include <errno.h>
#include <string.h>

#define MEMWORDS 16 /* BPF_MEMWORDS */

/* What the kernel checks before it accepts a program: every instruction known, every jump
 * and load in bounds, a return at the end. Return: 0 or -EINVAL. */
static int check(const struct sock_filter *prog, size_t len)
{
	for (size_t pc = 0; pc < len; pc++) {
		const struct sock_filter *f = &prog[pc];
		size_t left = len - pc - 1; /* instructions after this one */

		switch (BPF_CLASS(f->code)) {
		case BPF_LD:
		case BPF_LDX:
			if (BPF_SIZE(f->code) != BPF_W)
				return -EINVAL;
			if (BPF_MODE(f->code) == BPF_ABS &&
			    (BPF_CLASS(f->code) != BPF_LD || f->k % 4 ||
			     f->k + 4 > sizeof(struct seccomp_data)))
				return -EINVAL;
			if (BPF_MODE(f->code) == BPF_MEM && f->k >= MEMWORDS)
				return -EINVAL;
			break;
		case BPF_ST:
		case BPF_STX:
			if (f->k >= MEMWORDS)
				return -EINVAL;
			break;
		case BPF_JMP:
			if (BPF_OP(f->code) == BPF_JA ? f->k >= left
						      : (f->jt >= left || f->jf >= left))
				return -EINVAL;
			break;
		default:
			break;
		}
	}
	return BPF_CLASS(prog[len - 1].code) == BPF_RET ? 0 : -EINVAL;
}

int sandbox_bpf_run(const struct sock_filter *prog, size_t len, const struct seccomp_data *d,
		    uint32_t *ret_action, size_t *ret_steps)
{
	uint32_t a = 0, x = 0, mem[MEMWORDS] = {0}, k;
	size_t pc = 0, steps = 0;

	if (!prog || !len || len > BPF_MAXINSNS || check(prog, len))
		return -EINVAL;
	while (pc < len) {
		const struct sock_filter *f = &prog[pc++];
		uint32_t src;

		steps++;
		k = f->k;
		switch (BPF_CLASS(f->code)) {
		case BPF_LD:
		case BPF_LDX:
			if (BPF_SIZE(f->code) != BPF_W)
				return -EINVAL;
			switch (BPF_MODE(f->code)) {
			case BPF_ABS:
				if (BPF_CLASS(f->code) != BPF_LD || k % 4 ||
				    k + 4 > sizeof(struct seccomp_data))
					return -EINVAL;
				memcpy(&src, (const char *)d + k, 4);
				break;
			case BPF_LEN:
				src = sizeof(struct seccomp_data);
				break;
			case BPF_IMM:
				src = k;
				break;
			case BPF_MEM:
				if (k >= MEMWORDS)
					return -EINVAL;
				src = mem[k];
				break;
			default:
				return -EINVAL;
			}
			if (BPF_CLASS(f->code) == BPF_LD)
				a = src;
			else
				x = src;
			break;
		case BPF_ST:
		case BPF_STX:
			if (k >= MEMWORDS)
				return -EINVAL;
			mem[k] = BPF_CLASS(f->code) == BPF_ST ? a : x;
			break;
		case BPF_ALU:
			src = BPF_SRC(f->code) == BPF_X ? x : k;
			switch (BPF_OP(f->code)) {
			case BPF_ADD:
				a += src;
				break;
			case BPF_SUB:
				a -= src;
				break;
			case BPF_MUL:
				a *= src;
				break;
			case BPF_DIV:
				if (!src)
					return -EINVAL;
				a /= src;
				break;
			case BPF_MOD:
				if (!src)
					return -EINVAL;
				a %= src;
				break;
			case BPF_OR:
				a |= src;
				break;
			case BPF_AND:
				a &= src;
				break;
			case BPF_XOR:
				a ^= src;
				break;
			case BPF_LSH:
				a = src < 32 ? a << src : 0;
				break;
			case BPF_RSH:
				a = src < 32 ? a >> src : 0;
				break;
			case BPF_NEG:
				a = -a;
				break;
			default:
				return -EINVAL;
			}
			break;
		case BPF_JMP: {
			bool taken;

			if (BPF_OP(f->code) == BPF_JA) {
				if (k >= len - pc)
					return -EINVAL;
				pc += k;
				break;
			}
			src = BPF_SRC(f->code) == BPF_X ? x : k;
			switch (BPF_OP(f->code)) {
			case BPF_JEQ:
				taken = a == src;
				break;
			case BPF_JGT:
				taken = a > src;
				break;
			case BPF_JGE:
				taken = a >= src;
				break;
			case BPF_JSET:
				taken = (a & src) != 0;
				break;
			default:
				return -EINVAL;
			}
			if ((taken ? f->jt : f->jf) >= len - pc)
				return -EINVAL;
			pc += taken ? f->jt : f->jf;
			break;
		}
		case BPF_RET:
			if (BPF_RVAL(f->code) == BPF_A)
				*ret_action = a;
			else if (BPF_RVAL(f->code) == BPF_K)
				*ret_action = k;
			else
				return -EINVAL;
			if (ret_steps)
				*ret_steps = steps;
			return 0;
		case BPF_MISC:
			if (BPF_MISCOP(f->code) == BPF_TAX)
				x = a;
			else if (BPF_MISCOP(f->code) == BPF_TXA)
				a = x;
			else
				return -EINVAL;
			break;
		default:
			return -EINVAL;
		}
	}
	return -EINVAL;
}
