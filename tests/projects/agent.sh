# A scripted `cmd:` agent of the real-project tests (tests/cli/real_projects.rs) and of
# bench/aggregate-real.sh, sourced by a per-agent script that sets:
#   PROJECTS  tests/projects/projects.json     PROJECT  its key (toolz, heck, fastify-busboy)
#   FIXER     tests/projects/fixer.py          SKILL    bug ids it knows (best-of-N), comma-separated
#   LOG       prefix of its logs: every prompt to $LOG.<agent>, its commands' stderr to $LOG.<agent>.err
#
# On a propose hop it fixes its slice (aggregate: the hop names `slice=`) or what its skill knows
# (best-of-N: no slice), and proposes; when its slice holds no injected bug it abstains and says
# why. On an endorse hop it endorses every agent named.
prompt=$(cat)
me=$GIT_MAS_AGENT
exec 2>>"$LOG.$me.err"
field() { printf '%s\n' "$prompt" | sed -n "s/^$1=//p" | head -n 1; }
printf '%s\n=====\n' "$prompt" >>"$LOG.$me"
case "$(field task)" in
  propose)
    slice=$(field slice)
    if [ -n "$slice" ]; then
      fixed=$(python3 "$FIXER" "$PROJECTS" "$PROJECT" slice "$slice")
    else
      fixed=$(python3 "$FIXER" "$PROJECTS" "$PROJECT" skill "$SKILL")
    fi
    if [ "$fixed" = 0 ]; then
      git mas propose --abstain -m "no injected bug in my slice: nothing of mine fails ($slice)" >&2
    else
      git mas propose -m "$me reverts $fixed bug(s)" >&2
    fi ;;
  endorse) for p in $(field endorse | tr , ' '); do git mas endorse "$p" >&2; done ;;
esac
next=$(field next)
echo "done"
if [ "$next" = DONE ]; then echo DONE; else echo "NEXT $next"; fi
