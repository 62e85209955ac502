/* policy.c - placeholder */
int policy_placeholder(void);
int policy_placeholder(void) { return 0; }
