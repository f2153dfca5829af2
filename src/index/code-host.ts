/** The code hosts a repository can live on (spec: Repository info `codeHostType`). Kept free of Node types: the web app imports it too. */
export type CodeHostType =
  | 'github'
  | 'gitlab'
  | 'gitea'
  | 'gerrit'
  | 'bitbucketServer'
  | 'bitbucketCloud'
  | 'genericGitHost'
  | 'azuredevops';
