/* run_sandbox.h - internal to launcher/: the sandbox step of a run behind one interface. */
#ifndef WARDEN_LAUNCHER_RUN_SANDBOX_H
#define WARDEN_LAUNCHER_RUN_SANDBOX_H

/* Which processes of a sandbox a signal is for (see run_sandbox_signal()). */
enum sandbox_target {
	SANDBOX_PROGRAM, /* the program (forwarded signals); the sandbox's process before it is
			    known */
	SANDBOX_TREE,	 /* every process inside but the sandbox's init (the timeout's SIGTERM) */
	SANDBOX_INSIDE,	 /* the sandbox's init: the kernel ends everything inside with it */
};

#endif /* WARDEN_LAUNCHER_RUN_SANDBOX_H */
