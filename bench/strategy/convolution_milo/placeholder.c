/* Not compiled: the convolution_milo kernel is only replayed (see kernel.yaml). */
void convolution_reference(void **args);
void convolution_reference(void **args) { (void)args; }
