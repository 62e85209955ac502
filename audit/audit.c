/* audit.c - placeholder */
int audit_placeholder(void);
int audit_placeholder(void) { return 0; }
