dnl m4/fastlock.m4: the option helpers of configure.ac.

dnl FL_ARG_CHOICE(NAME, HELP-VALUES, VALID-LIST, DEFAULT, HELP)
dnl Declares --with-NAME, validates the value against VALID-LIST and leaves
dnl it in fl_with_NAME (dashes become underscores).  "given" records
dnl whether the user asked for it, so that a knob that does not apply to
dnl this host can be refused instead of being ignored silently.
AC_DEFUN([FL_ARG_CHOICE], [
  AC_ARG_WITH([$1], [AS_HELP_STRING([--with-$1=$2], [$5])],
    [fl_given_[]m4_translit([$1], [-], [_])=yes
     fl_with_[]m4_translit([$1], [-], [_])=$withval],
    [fl_given_[]m4_translit([$1], [-], [_])=no
     fl_with_[]m4_translit([$1], [-], [_])=$4])
  fl_ok=no
  for fl_v in $3; do
    AS_IF([test "x$fl_v" = "x$fl_with_[]m4_translit([$1], [-], [_])"], [fl_ok=yes])
  done
  AS_IF([test $fl_ok = no],
    [AC_MSG_ERROR([--with-$1: unknown value '$fl_with_[]m4_translit([$1], [-], [_])'; valid values are: $3])])
])

dnl FL_ARG_ONLY_ON(NAME, ARCH): refuse a knob given for another arch or
dnl for a builtin build, where it would change nothing.
AC_DEFUN([FL_ARG_ONLY_ON], [
  AS_IF([test "$fl_given_[]m4_translit([$1], [-], [_])" = yes],
    [AS_IF([test "$fl_arch" != "$2"],
       [AC_MSG_ERROR([--with-$1 applies only to $2 hosts; this host is $host_cpu ($fl_arch)])])
     AS_IF([test "$fl_with_atomics" != asm],
       [AC_MSG_ERROR([--with-$1 selects a hand-written asm variant; it cannot be combined with --with-atomics=builtin])])])
])

