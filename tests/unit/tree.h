/* tree.h - remove a test's temporary folder and everything below it (the unit
 * tests' compile caches: backend/xx/key.*, moved-aside marks, whatever a test
 * left). Header-only, for the tests that make such folders. */
#ifndef TF_TEST_TREE_H
#define TF_TEST_TREE_H

#include <ftw.h>
#include <stdio.h>
#include <sys/stat.h>

static int tree_remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0; /* go on: what cannot be removed stays */
}

/* rm -rf `dir`, never following symbolic links. */
static void remove_tree(const char *dir)
{
    nftw(dir, tree_remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

#endif
