/* Fixture for the space tests: never compiled, only hashed. */
void space_kernel(void **args);
void space_reference(void **args);
void space_kernel(void **args) { (void)args; }
void space_reference(void **args) { (void)args; }
