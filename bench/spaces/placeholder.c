/* Not compiled: bench/spaces/NAME/kernel.yaml are parameter spaces only. */
void placeholder(void **args);
void placeholder(void **args) { (void)args; }
