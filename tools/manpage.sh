#!/bin/sh
# tools/manpage.sh TSTEP - write the man page tstep(1) to stdout, made from
# the program's own --help texts (`tstep --help` and `tstep COMMAND --help`
# for every command it lists), so the page says what the program does.
set -e
tstep=${1:?usage: tools/manpage.sh path/to/tstep}
version=$("$tstep" --version | sed -n 's/^tstep \([^ ]*\).*/\1/p')
# Text to roff: backslashes doubled, lines starting with . or ' protected.
roff() { sed -e 's/\\/\\e/g' -e "s/^\([.']\)/\\\\\&\1/"; }
commands=$("$tstep" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z-][a-z-]*\) .*/\1/p')

cat <<HEAD
.TH TSTEP 1 "" "tstep $version" "User Commands"
.SH NAME
tstep \\- time integration of particle systems: run, sweep, stability
.SH SYNOPSIS
.B tstep
[\\fB\\-\\-plugin\\fR \\fIFILE.so\\fR]... \\fICOMMAND\\fR [\\fIOPTIONS\\fR]
.br
.B tstep
\\fB\\-\\-version\\fR | \\fB\\-\\-help\\fR
.SH DESCRIPTION
The text of \\fBtstep \\-\\-help\\fR:
.PP
.nf
HEAD
"$tstep" --help | roff
echo ".fi"
echo ".SH COMMANDS"
for c in $commands; do
    echo ".SS $c"
    echo ".nf"
    "$tstep" "$c" --help | roff
    echo ".fi"
done
cat <<TAIL
.SH FILES
.TP
.I PREFIX/share/tstep/*.gp
the gnuplot scripts that draw tstep's figures (run them with
\\fBset loadpath\\fR pointing at that directory).
.TP
.I PREFIX/include/tstep/tstep.h
the library's API, plugins and \\fBtstep_main\\fR; \\fBpkg\\-config \\-\\-cflags \\-\\-libs tstep\\fR.
.SH SEE ALSO
.BR gnuplot (1),
.BR pkg\\-config (1)
TAIL
