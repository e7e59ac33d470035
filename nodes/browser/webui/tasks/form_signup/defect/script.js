document.getElementById('signup').addEventListener('submit', (event) => {
  event.preventDefault();
  const name = document.getElementById('name').value.trim();
  const email = document.getElementById('email').value.trim();
  const result = document.getElementById('result');
  result.classList.remove('hidden');
  if (!name || !email.includes('@')) {
    result.classList.add('error');
    result.textContent = 'Please give a name and a valid e-mail.';
  } else {
    result.classList.remove('error');
    result.textContent = 'Welcome, ' + name + '! See you on Thursday.';
  }
});
